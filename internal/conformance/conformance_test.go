package conformance

import (
	"net/http"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	str := func(s string) *string { return &s }
	s := Step{Expect: Expect{Status: 200, Headers: map[string]*string{"Content-Type": str("text/plain"), "x-gone": nil, "set-cookie": str("a=1, b=2")}, BodyJSON: []byte(`{"a":[1,2],"b":"x"}`)}}
	h := http.Header{"Content-Type": {"text/plain"}, "Set-Cookie": {"a=1", "b=2"}}
	if p := Compare(s, 200, h, []byte(`{"b":"x","a":[1.0,2]}`)); len(p) != 0 {
		t.Fatalf("equal response reported: %v", p)
	}
	h.Set("X-Gone", "here")
	p := Compare(s, 201, h, []byte(`{"a":[2,1],"b":"x"}`))
	if len(p) != 3 || !strings.Contains(p[0], "status") || !strings.Contains(p[1], "x-gone") || !strings.Contains(p[2], "body_json") {
		t.Fatalf("mismatches = %v", p)
	}
	re := Step{Expect: Expect{Status: 200, BodyRegex: str("[0-9a-f]{4}")}}
	if p := Compare(re, 200, nil, []byte("abcd1")); len(p) != 1 {
		t.Fatalf("regex must be anchored: %v", p)
	}
}
