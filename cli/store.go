package cli

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/celldgo/celld/bucket"
)

// openStore builds the bucket client from the shared flags.
func (g *globals) openStore() (bucket.Store, error) {
	loc, err := bucket.ParseLocation(g.Bucket)
	if err != nil {
		return nil, &Error{Err: err, Code: ExitUsage, Hint: "pass --bucket s3://NAME[/PREFIX] (with --endpoint for a non-AWS store) or --bucket file:///abs/path"}
	}
	switch loc.Scheme {
	case "file":
		if g.Endpoint != "" {
			return nil, usageErr("--endpoint %q makes no sense with a file:// bucket", g.Endpoint)
		}
		s, err := bucket.NewFile(loc.Path)
		if err != nil {
			return nil, &Error{Err: err, Code: ExitUsage}
		}
		return s, nil
	default:
		if g.Endpoint != "" {
			u, err := url.Parse(g.Endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, usageErr("endpoint %q: want an http:// or https:// URL such as http://127.0.0.1:9000", g.Endpoint)
			}
		}
		s, err := bucket.NewS3(bucket.S3Config{Bucket: loc.Bucket, Prefix: loc.Prefix, Endpoint: g.Endpoint, Region: g.Region})
		if err != nil {
			return nil, &Error{Err: fmt.Errorf("open %s: %w", loc, err), Code: ExitUsage}
		}
		return s, nil
	}
}

// storeErr maps a store failure: unreachable, refused or missing bucket is
// the operator's to fix (2); anything else is 1.
func storeErr(err error) error {
	switch {
	case errors.Is(err, bucket.ErrUnavailable), errors.Is(err, bucket.ErrDenied), errors.Is(err, bucket.ErrNoBucket):
		return &Error{Err: err, Code: ExitUsage, Hint: "check --bucket, --endpoint and the credentials; celld diagnose tests the store"}
	default:
		return &Error{Err: err, Code: ExitFailure}
	}
}
