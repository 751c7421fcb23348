package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// cloudflareOnly are the config keys (top level or in an env section) that
// matter only on Cloudflare's network: where the Worker is routed, which
// account it belongs to, how Cloudflare logs and places it. celld accepts
// them so an unchanged Wrangler project deploys, and names them in one
// warning line (Config.Ignored).
var cloudflareOnly = map[string]bool{
	"account_id": true, "observability": true, "workers_dev": true, "preview_urls": true,
	"routes": true, "route": true, "zone_id": true, "placement": true,
	"logpush": true, "tail_consumers": true, "limits": true, "usage_model": true,
	"send_metrics": true, "keep_vars": true, "compliance_region": true, "dev": true,
}

// nonInheritable are the keys a named environment does not take from the
// top level: the bindings and vars (Wrangler's rule; each env.<name> section
// repeats them). Every other key is inherited unless the section sets it.
var nonInheritable = map[string]bool{
	"vars": true, "durable_objects": true, "d1_databases": true, "kv_namespaces": true,
	"r2_buckets": true, "queues": true, "services": true,
}

// ParseConfig parses src, the text of the config file named file, without
// validating it against a project directory. A key celld does not accept
// is reported with its path, e.g. `wrangler.jsonc: unknown key "ai"`.
func ParseConfig(file string, src []byte) (*Config, error) {
	return ParseConfigEnv(file, src, "")
}

// ReadConfig parses the config file at path (JSONC, JSON or TOML, by its
// extension) and resolves the environment env ("": the top level). It
// does not validate the config against the project directory: the d1 and
// kv commands read their bindings through it.
func ReadConfig(path, env string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, projectErr("", "read %s: %v", path, unwrapPathErr(err))
	}
	return ParseConfigEnv(path, src, env)
}

// ParseConfigEnv is ParseConfig for the environment env. The format
// follows file's extension: .toml is TOML, anything else JSON with
// comments and trailing commas.
func ParseConfigEnv(file string, src []byte, env string) (*Config, error) {
	var (
		obj   map[string]any
		plain []byte // JSON text the Config is decoded from
		err   error
	)
	isTOML := strings.EqualFold(filepath.Ext(file), ".toml")
	if isTOML {
		obj, plain, err = parseTOML(file, src)
		if err != nil {
			return nil, err
		}
	} else {
		if plain, err = stripJSONC(src); err != nil {
			return nil, projectErr("", "%s:%v", file, err)
		}
		var raw any
		if err := decodeStrict(plain, &raw); err != nil {
			return nil, decodeErr(file, src, err)
		}
		var ok bool
		if obj, ok = raw.(map[string]any); !ok {
			return nil, projectErr("", "%s: want a JSON object at the top level", file)
		}
	}
	if pe := checkConfigKeys(file, obj); pe != nil {
		return nil, pe
	}
	if pe := checkNulls(file, obj); pe != nil {
		return nil, pe
	}
	var cfg Config
	if err := decodeStrict(plain, &cfg); err != nil {
		if isTOML {
			return nil, tomlTypeErr(file, err, obj)
		}
		return nil, decodeErr(file, src, err)
	}
	return resolveEnv(file, &cfg, obj, env)
}

// checkConfigKeys reports every key of obj (the whole file) that celld
// does not accept, env sections included.
func checkConfigKeys(file string, obj map[string]any) *ProjectError {
	var unknown []string
	checkKeys("", obj, reflect.TypeFor[Config](), &unknown)
	if envs, ok := obj["env"].(map[string]any); ok {
		for _, name := range sortedKeys(envs) {
			if sec, ok := envs[name].(map[string]any); ok {
				if _, nested := sec["env"]; nested {
					unknown = append(unknown, "env."+name+".env")
				}
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	pe := &ProjectError{Hint: "celld deploy accepts the keys " + strings.Join(acceptedKeys(), ", ") +
		"; and ignores the Cloudflare-only keys " + strings.Join(sortedKeys(cloudflareOnly), ", ")}
	for _, k := range unknown {
		pe.Problems = append(pe.Problems, fmt.Sprintf("%s: unknown key %q", file, k))
	}
	return pe
}

// resolveEnv returns the config for environment env with Wrangler's
// rules: a key the env.<name> section sets replaces the top level's; the
// non-inheritable keys (bindings, vars) come only from the section; every
// other key is inherited. The Worker is named "<name>-<env>" unless the
// section names it. env "" is the top level.
func resolveEnv(file string, top *Config, obj map[string]any, env string) (*Config, error) {
	ignored := presentKeys("", obj, cloudflareOnly)
	if env == "" {
		out := *top
		out.Ignored = ignored
		return &out, nil
	}
	envs, _ := obj["env"].(map[string]any)
	sec, ok := envs[env].(map[string]any)
	if !ok && len(envs) == 0 {
		// No named environments at all: Wrangler runs the top level as
		// the named one, bindings included, under <name>-<env>.
		out := *top
		if top.Name != "" {
			out.Name = top.Name + "-" + env
		}
		out.EnvName, out.Ignored = env, ignored
		out.Notes = []string{fmt.Sprintf("no [env.%s] section in %s: using the top-level config as environment %q", env, filepath.Base(file), env)}
		return &out, nil
	}
	if !ok {
		have := "it has " + strings.Join(sortedKeys(envs), ", ")
		return nil, &ProjectError{
			Problems: []string{fmt.Sprintf("%s: No environment found in configuration with name %q (%s).", file, env, have)},
			Hint:     fmt.Sprintf("add an [env.%s] section (or \"env\": {%q: {…}}), or drop --env", env, env)}
	}
	section := top.Env[env]
	out := *top
	out.Env = nil
	ov := reflect.ValueOf(&out).Elem()
	sv := reflect.ValueOf(&section).Elem()
	for i := range ov.NumField() {
		name, _, _ := strings.Cut(ov.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "env" {
			continue
		}
		if _, set := sec[name]; set {
			ov.Field(i).Set(sv.Field(i))
		} else if nonInheritable[name] {
			ov.Field(i).SetZero()
		}
	}
	if _, named := sec["name"]; !named && top.Name != "" {
		out.Name = top.Name + "-" + env
	}
	out.EnvName = env
	out.Ignored = slices.Concat(presentKeys("", withoutEnv(obj), cloudflareOnly), presentKeys("env."+env+".", sec, cloudflareOnly))
	return &out, nil
}

// EnvNames lists the config's named environments, sorted.
func (c *Config) EnvNames() []string { return sortedKeys(c.Env) }

// IgnoredWarning is the one warning line naming the Cloudflare-only keys
// the config sets; "" when there are none.
func (c *Config) IgnoredWarning() string {
	if len(c.Ignored) == 0 {
		return ""
	}
	return "ignored (they matter only on Cloudflare's network): " + strings.Join(c.Ignored, ", ")
}

func withoutEnv(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "env" {
			out[k] = v
		}
	}
	return out
}

func presentKeys(prefix string, obj map[string]any, set map[string]bool) []string {
	var out []string
	for _, k := range sortedKeys(obj) {
		if set[k] {
			out = append(out, prefix+k)
		}
	}
	return out
}

// parseTOML decodes a wrangler.toml into the generic object the key check
// reads and the JSON text the Config is decoded from. A syntax error names
// the line and column.
func parseTOML(file string, src []byte) (map[string]any, []byte, error) {
	var obj map[string]any
	if _, err := toml.Decode(string(src), &obj); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, nil, projectErr("", "%s:%d:%d: %s", file, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return nil, nil, projectErr("", "%s: %v", file, err)
	}
	norm, err := jsonValue("", obj)
	if err != nil {
		return nil, nil, projectErr("", "%s: %v", file, err)
	}
	plain, err := json.Marshal(norm)
	if err != nil {
		return nil, nil, projectErr("", "%s: %v", file, err)
	}
	var back map[string]any // the same shape the JSON path checks
	if err := decodeStrict(plain, &back); err != nil {
		return nil, nil, projectErr("", "%s: %v", file, err)
	}
	return back, plain, nil
}

// jsonValue turns a decoded TOML value into one JSON can hold. Dates and
// times become their TOML text; infinities and NaN, which JSON has no
// spelling for, are refused by key.
func jsonValue(path string, v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			n, err := jsonValue(p, e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := jsonValue(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := jsonValue(fmt.Sprintf("%s[%d]", path, i), e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("%s: %v cannot be represented (use a string)", path, x)
		}
		return x, nil
	case time.Time:
		// TOML's local dates and times carry a named zone of their own.
		switch x.Location().String() {
		case "date-local":
			return x.Format("2006-01-02"), nil
		case "time-local":
			return x.Format("15:04:05.999999999"), nil
		case "datetime-local":
			return x.Format("2006-01-02T15:04:05.999999999"), nil
		}
		return x.Format(time.RFC3339Nano), nil
	default:
		return v, nil
	}
}

// tomlTypeErr names the key whose TOML value has the wrong type; TOML has
// no byte offsets that survive the translation, so the key path says where.
func tomlTypeErr(file string, err error, obj map[string]any) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			where = "value"
		}
		if rest, ok := strings.CutPrefix(where, "env."); ok {
			where = "env.<name>." + rest
			// encoding/json names the field, not the map key: find the
			// section whose value fails.
			envs, _ := obj["env"].(map[string]any)
			for _, name := range sortedKeys(envs) {
				b, _ := json.Marshal(envs[name])
				var c Config
				if decodeStrict(b, &c) != nil {
					where = "env." + name + "." + rest
					break
				}
			}
		}
		return projectErr("", "%s: %s: want %s, got a TOML %s", file, where, jsonKind(te.Type), tomlKind(te.Value))
	}
	return projectErr("", "%s: %v", file, err)
}

func tomlKind(jsonValue string) string {
	switch jsonValue {
	case "number":
		return "number"
	case "object":
		return "table"
	case "array":
		return "array"
	case "bool":
		return "boolean"
	default:
		return jsonValue
	}
}
