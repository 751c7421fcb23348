package bucket

import (
	"strings"
	"testing"
)

func TestParseLocation(t *testing.T) {
	good := []struct {
		in   string
		want Location
	}{
		{"s3://my-bucket", Location{Scheme: "s3", Bucket: "my-bucket"}},
		{"s3://my-bucket/", Location{Scheme: "s3", Bucket: "my-bucket"}},
		{"s3://my-bucket/team/prod", Location{Scheme: "s3", Bucket: "my-bucket", Prefix: "team/prod"}},
		{"file:///tmp/x/../y", Location{Scheme: "file", Path: "/tmp/y"}},
		{"file://localhost/srv/b", Location{Scheme: "file", Path: "/srv/b"}},
	}
	for _, g := range good {
		got, err := ParseLocation(g.in)
		if err != nil || got != g.want {
			t.Errorf("ParseLocation(%q) = %+v, %v; want %+v", g.in, got, err, g.want)
		}
	}
	bad := []struct{ in, wantErr string }{
		{"", "no bucket given"},
		{"my-bucket", "missing scheme"},
		{"gs://b", "unsupported scheme"},
		{"s3://", "missing bucket name"},
		{"s3://B_ad", "not allowed"},
		{"s3://ab", "3 to 63"},
		{"s3://b-ok:9000", "unexpected"},
		{"s3://bkt/a//b", "prefix"},
		{"file://relative/path", "absolute path"},
		{"file:///", ""},
	}
	for _, b := range bad {
		_, err := ParseLocation(b.in)
		if b.wantErr == "" {
			if err != nil {
				t.Errorf("ParseLocation(%q): unexpected error %v", b.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), b.wantErr) {
			t.Errorf("ParseLocation(%q) error = %v, want it to mention %q", b.in, err, b.wantErr)
		}
	}
}
