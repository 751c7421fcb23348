package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func r2Dir(t *testing.T) (bucketURL, dir string) {
	dir = t.TempDir()
	return "file://" + filepath.Join(dir, "bucket"), dir
}

func TestR2Object_PutHeadGetListDelete(t *testing.T) {
	b, dir := r2Dir(t)
	src := filepath.Join(dir, "in.txt")
	os.WriteFile(src, []byte("hello r2"), 0o644)
	r := run(t, "--bucket", b, "r2", "object", "put", "media/docs/a.txt", "--file", src,
		"--content-type", "text/plain", "--cache-control", "max-age=60", "--custom-metadata", `{"author":"ann"}`)
	if r.err != nil || r.stdout != "" || !strings.Contains(r.stderr, `Creating object "docs/a.txt" in bucket "media".`) {
		t.Fatalf("put: %v, stdout %q, stderr %q", r.err, r.stdout, r.stderr)
	}
	r = run(t, "--bucket", b, "r2", "object", "head", "media/docs/a.txt")
	for _, want := range []string{"key: docs/a.txt\n", "size: 8\n", "http.contentType: text/plain\n", "http.cacheControl: max-age=60\n", "custom.author: ann\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("head output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = run(t, "--bucket", b, "r2", "head", "media", "docs/a.txt", "--json")
	var rec struct {
		Key    string            `json:"key"`
		Size   int64             `json:"size"`
		Custom map[string]string `json:"custom"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.Key != "docs/a.txt" || rec.Size != 8 || rec.Custom["author"] != "ann" {
		t.Errorf("head --json = %q (%v)", r.stdout, err)
	}
	// Wrangler's --pipe and upstream's flat get both write the bytes to stdout.
	if r = run(t, "--bucket", b, "r2", "object", "get", "media/docs/a.txt", "--pipe"); r.stdout != "hello r2" || r.stderr != "" {
		t.Errorf("get --pipe: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if r = run(t, "--bucket", b, "r2", "get", "media", "docs/a.txt"); r.stdout != "hello r2" {
		t.Errorf("flat get: stdout %q", r.stdout)
	}
	out := filepath.Join(dir, "out.txt")
	if r = run(t, "--bucket", b, "r2", "object", "get", "media/docs/a.txt", "--file", out); r.err != nil {
		t.Fatal(r.err)
	}
	if got, _ := os.ReadFile(out); string(got) != "hello r2" {
		t.Errorf("get --file wrote %q", got)
	}
	run(t, "--bucket", b, "r2", "object", "put", "media/docs/b/", "--file", src)
	if r = run(t, "--bucket", b, "r2", "object", "list", "media", "--prefix", "docs/"); r.stdout != "docs/a.txt\ndocs/b/\n" {
		t.Errorf("list: %q", r.stdout)
	}
	if r = run(t, "--bucket", b, "r2", "object", "delete", "media/docs/a.txt"); r.err != nil || !strings.Contains(r.stderr, "Delete complete.") {
		t.Errorf("delete: %v %q", r.err, r.stderr)
	}
	r = run(t, "--bucket", b, "r2", "object", "get", "media/docs/a.txt", "--pipe")
	if r.code != 1 || !strings.Contains(r.err.Error(), "The specified key does not exist.") {
		t.Errorf("get after delete: code %d err %v", r.code, r.err)
	}
}

func TestR2Object_BadInput(t *testing.T) {
	b, dir := r2Dir(t)
	src := filepath.Join(dir, "in.txt")
	os.WriteFile(src, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"r2", "object", "put", "Bad_Name/k", "--file", src}, `invalid R2 bucket name "Bad_Name"`},
		{[]string{"r2", "object", "put", "media", "--file", src}, "the object path must be BUCKET/KEY"},
		{[]string{"r2", "object", "put", "media/k"}, "pass exactly one of --file and --pipe"},
		{[]string{"r2", "object", "put", "media/k", "--file", src, "--custom-metadata", "[1]"}, "--custom-metadata: want a JSON object of strings"},
		{[]string{"r2", "object", "get", "media/k", "--local"}, "celld r2 does not take --local"},
		{[]string{"r2", "object", "list", "media", "--limit", "0"}, "--limit 0: want 1..1000"},
		{[]string{"r2", "get", "media"}, "takes two arguments, BUCKET and KEY"},
	} {
		r := run(t, append([]string{"--bucket", b}, c.args...)...)
		if r.code != 2 || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("%q: code %d, err %v; want 2 and %q", c.args, r.code, r.err, c.want)
		}
	}
}
