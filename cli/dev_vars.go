package cli

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
)

// devVars reads the local-development values celld dev adds to env, with
// Wrangler's precedence: .dev.vars.<env> (with --env) or else .dev.vars;
// only when neither exists, the .env files (.env, .env.local, .env.<env>,
// .env.<env>.local, a later file winning). It returns the values and the
// files read.
func devVars(dir, env string) (map[string]string, []string, error) {
	var devFiles []string
	if env != "" {
		devFiles = append(devFiles, ".dev.vars."+env)
	}
	devFiles = append(devFiles, ".dev.vars")
	for _, f := range devFiles {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err == nil {
			vals, err := readDotenv(p)
			return vals, []string{f}, err
		}
	}
	envFiles := []string{".env", ".env.local"}
	if env != "" {
		envFiles = append(envFiles, ".env."+env, ".env."+env+".local")
	}
	out := map[string]string{}
	var read []string
	for _, f := range envFiles {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		vals, err := readDotenv(p)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(out, vals)
		read = append(read, f)
	}
	return out, read, nil
}

// readDotenv parses a dotenv file: KEY=VALUE lines (an optional "export "
// prefix), # comments, values bare (an inline " #" starts a comment),
// 'single-quoted' (literal) or "double-quoted" (\n, \t, \" and \\
// escapes; may span lines).
func readDotenv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(string(b), "\r\n", "\n")))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.TrimPrefix(l, "export ")
		key, val, ok := strings.Cut(l, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", filepath.Base(path), line)
		}
		val = strings.TrimSpace(val)
		switch {
		case strings.HasPrefix(val, `"`):
			body := val[1:]
			for !closedQuote(body) && sc.Scan() {
				line++
				body += "\n" + sc.Text()
			}
			end := closingQuote(body)
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: unterminated \" in %s", filepath.Base(path), line, key)
			}
			val = unescapeDouble(body[:end])
		case strings.HasPrefix(val, "'"):
			end := strings.IndexByte(val[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("%s:%d: unterminated ' in %s", filepath.Base(path), line, key)
			}
			val = val[1 : 1+end]
		default:
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		out[key] = val
	}
	return out, sc.Err()
}

func closedQuote(s string) bool { return closingQuote(s) >= 0 }

// closingQuote is the index of the first unescaped " in s, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func unescapeDouble(s string) string {
	r := strings.NewReplacer(`\n`, "\n", `\r`, "\r", `\t`, "\t", `\"`, `"`, `\\`, `\`)
	return r.Replace(s)
}

// parseVarFlags reads --var KEY:VALUE flags (Wrangler's syntax).
func parseVarFlags(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, ":")
		if !ok || k == "" {
			return nil, usageErr("--var %q: want KEY:VALUE", f)
		}
		out[k] = v
	}
	return out, nil
}
