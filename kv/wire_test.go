package kv

import "testing"

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		` { "a" : [1, 2.50, {"b": null}], "c":"t\u003c0\u003e", "d": {}, "e": [], "f": [[true], {"g": false}] } `: `{"a":[1,2.50,{"b":null}],"c":"t<0>","d":{},"e":[],"f":[[true],{"g":false}]}`,
		`"x"`:            `"x"`,
		`[]`:             `[]`,
		`"\u00e9\n\"\\"`: `"é\n\"\\"`,
	} {
		got, err := canonicalJSON([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("canonicalJSON(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestCanonicalJSON_Refuses(t *testing.T) {
	for _, in := range []string{``, `{"a":`, `[1,`, `1 2`} {
		if got, err := canonicalJSON([]byte(in)); err == nil {
			t.Errorf("canonicalJSON(%q) = %s, want an error", in, got)
		}
	}
}
