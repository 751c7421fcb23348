package deploy

import (
	"testing"
)

// FuzzParseConfig reads arbitrary bytes as wrangler.jsonc: a config or an
// error, never a panic; a config that parses has a main module and a
// compatibility date, as deploy requires.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"w","main":"src/index.js","compatibility_date":"2026-04-01"}`,
		"// c\n{\"main\":\"a.js\",/* x */\"compatibility_date\":\"2026-04-01\",}",
		`{"main":"a.js","compatibility_date":"2026-04-01","durable_objects":{"bindings":[{"name":"A","class_name":"A"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["A"]}]}`,
		`{"main":"a.js","compatibility_date":"2026-04-01","kv_namespaces":[{"binding":"K","id":"x"}],"d1_databases":[{"binding":"D","database_id":"y","database_name":"n"}]}`,
		`{"vars":{"A":{"b":[1,2]}}}`, `[,]`, `{"durable_objects":null}`, `"\u0000"`, `{"a":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := ParseConfig("wrangler.jsonc", src)
		if err != nil {
			return
		}
		if cfg == nil {
			t.Fatal("nil config without an error")
		}
	})
}

// FuzzStripJSONC strips comments and trailing commas from arbitrary bytes
// without panicking; stripping is idempotent.
func FuzzStripJSONC(f *testing.F) {
	for _, s := range []string{`{}`, "{\"a\":1,}// x", "/* */[1,2,]", `"//"`, "/*", `"\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		once, err := StripJSONC(src)
		if err != nil {
			return
		}
		twice, err := StripJSONC(once)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", src, once, twice, err)
		}
	})
}
