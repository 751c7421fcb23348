package bucket

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Location is a parsed --bucket value: s3://NAME[/PREFIX] or
// file:///abs/path.
type Location struct {
	Scheme string // "s3" or "file"
	Bucket string // s3: bucket name
	Prefix string // s3: key prefix without leading/trailing slashes
	Path   string // file: absolute directory
}

func (l Location) String() string {
	switch l.Scheme {
	case "file":
		return "file://" + l.Path
	default:
		if l.Prefix != "" {
			return "s3://" + l.Bucket + "/" + l.Prefix
		}
		return "s3://" + l.Bucket
	}
}

// ParseLocation parses a --bucket value and names what is wrong with a bad
// one.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, fmt.Errorf("no bucket given: set --bucket or CELLD_BUCKET (s3://NAME[/PREFIX] or file:///abs/path)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("parse bucket %q: %w", s, err)
	}
	switch u.Scheme {
	case "s3":
		if u.Host == "" {
			return Location{}, fmt.Errorf("bucket %q: missing bucket name (want s3://NAME[/PREFIX])", s)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Port() != "" {
			return Location{}, fmt.Errorf("bucket %q: unexpected user, port, query or fragment (want s3://NAME[/PREFIX])", s)
		}
		if err := checkBucketName(u.Host); err != nil {
			return Location{}, fmt.Errorf("bucket %q: %w", s, err)
		}
		prefix := strings.Trim(u.Path, "/")
		if prefix != "" {
			if err := CheckKey(prefix); err != nil {
				return Location{}, fmt.Errorf("bucket %q: prefix: %w", s, err)
			}
		}
		return Location{Scheme: "s3", Bucket: u.Host, Prefix: prefix}, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, fmt.Errorf("bucket %q: file URLs need an absolute path (file:///abs/path), got host %q", s, u.Host)
		}
		if !filepath.IsAbs(u.Path) {
			return Location{}, fmt.Errorf("bucket %q: file URLs need an absolute path (file:///abs/path)", s)
		}
		return Location{Scheme: "file", Path: filepath.Clean(u.Path)}, nil
	case "":
		return Location{}, fmt.Errorf("bucket %q: missing scheme (want s3://NAME[/PREFIX] or file:///abs/path)", s)
	default:
		return Location{}, fmt.Errorf("bucket %q: unsupported scheme %q (want s3:// or file://)", s, u.Scheme)
	}
}

// checkBucketName applies S3's bucket naming rules.
func checkBucketName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", name)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
		if !ok {
			return fmt.Errorf("bucket name %q: character %q at %d is not allowed (lowercase letters, digits, '-', '.')", name, c, i)
		}
	}
	if first, last := name[0], name[len(name)-1]; first == '-' || first == '.' || last == '-' || last == '.' {
		return fmt.Errorf("bucket name %q must start and end with a letter or digit", name)
	}
	return nil
}
