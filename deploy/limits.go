package deploy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Limits Cloudflare documents for a Worker's configuration, enforced at
// deploy (and by celld dev) so a project that deploys here also deploys
// there.
const (
	// MaxVars is the most vars a Worker may have (Cloudflare: 64 on the
	// Free plan, 128 on Paid; celld takes the Paid limit).
	MaxVars = 128
	// MaxVarBytes bounds one var's value: 5 KB, its text for a string,
	// its JSON for any other value.
	MaxVarBytes = 5 << 10
	// RuntimeCompatibilityDate is the newest compatibility date celld's
	// runtime implements: the workerd release its behaviour is recorded
	// against (1.20260426). A later date that is not in the future runs
	// with this date's behaviour, with a warning (as Wrangler's local dev
	// falls back to its runtime's date); a date in the future is refused,
	// as Cloudflare refuses it.
	RuntimeCompatibilityDate = "2026-04-26"
)

// validateLimits reports the config's breaches of the limits above and a
// compatibility_date that is no real date.
func (c *Config) validateLimits() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if d := c.CompatibilityDate; d != "" && isoDate.MatchString(d) {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			add("Invalid compatibility date: %q (compatibility_date: no such day)", d)
		} else if d > latestAllowedDate(time.Now()) {
			add("compatibility_date %q is in the future: a Worker's compatibility date can be at most today's date", d)
		} else if d > RuntimeCompatibilityDate {
			c.Notes = append(c.Notes, fmt.Sprintf("compatibility_date %q is later than this runtime's newest, %q: the Worker runs with the behaviour of %q", d, RuntimeCompatibilityDate, RuntimeCompatibilityDate))
		}
	}
	if n := len(c.Vars); n > MaxVars {
		add("vars: %d variables, more than the %d a Worker may have", n, MaxVars)
	}
	for _, k := range sortedKeys(c.Vars) {
		size := 0
		switch v := c.Vars[k].(type) {
		case string:
			size = len(v)
		default:
			b, _ := json.Marshal(v)
			size = len(b)
		}
		if size > MaxVarBytes {
			add("vars.%s: %d bytes, more than the %d bytes (5 KB) a variable may hold", k, size, MaxVarBytes)
		}
	}
	return ps
}

// latestAllowedDate is the latest compatibility_date accepted at now:
// today, in the timezone furthest ahead of UTC (UTC+14), so a project
// dated today anywhere deploys.
func latestAllowedDate(now time.Time) string {
	return now.UTC().Add(14 * time.Hour).Format(time.DateOnly)
}

// nullKeys appends to found the path of every key of v whose value is
// null where t (the Go type v decodes into) wants an object or an array:
// encoding/json would silently leave the field empty, so
// "durable_objects": null would deploy as if the key were absent. User
// data (vars values) may be null.
func nullKeys(path string, v any, t reflect.Type, found *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wants := func(ft reflect.Type) string {
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch ft.Kind() {
		case reflect.Struct, reflect.Map:
			return "an object"
		case reflect.Slice:
			return "an array"
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[k]
			if !ok {
				continue // unknown keys are reported by checkKeys
			}
			p := k
			if path != "" {
				p = path + "." + k
			}
			if obj[k] == nil {
				if w := wants(ft); w != "" {
					*found = append(*found, fmt.Sprintf("%s: want %s, got null", p, w))
				}
				continue
			}
			nullKeys(p, obj[k], ft, found)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			p := fmt.Sprintf("%s[%d]", path, i)
			if e == nil {
				if w := wants(t.Elem()); w != "" {
					*found = append(*found, fmt.Sprintf("%s: want %s, got null", p, w))
				}
				continue
			}
			nullKeys(p, e, t.Elem(), found)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || wants(t.Elem()) == "" || t.Elem().Kind() == reflect.Interface {
			return // vars: any value goes
		}
		for _, k := range sortedKeys(obj) {
			if obj[k] == nil {
				*found = append(*found, fmt.Sprintf("%s.%s: want %s, got null", path, k, wants(t.Elem())))
				continue
			}
			nullKeys(path+"."+k, obj[k], t.Elem(), found)
		}
	}
}

// checkNulls is nullKeys over a whole config file, as a *ProjectError.
func checkNulls(file string, obj map[string]any) *ProjectError {
	var found []string
	nullKeys("", obj, reflect.TypeFor[Config](), &found)
	if len(found) == 0 {
		return nil
	}
	pe := &ProjectError{Hint: "remove the key, or give it a value of its type"}
	for _, f := range found {
		pe.Problems = append(pe.Problems, file+": "+f)
	}
	return pe
}
