package kv

import (
	"errors"
	"testing"
)

// FuzzParseBulkPut reads arbitrary bytes as a `celld kv bulk put` file: a
// whole, valid set of pairs or a *BulkFileError naming the file, never a
// panic, and never pairs together with an error.
func FuzzParseBulkPut(f *testing.F) {
	for _, s := range []string{
		`[]`, `[{"key":"a","value":"b"}]`, `[{"key":"a","value":"YWJj","base64":true,"metadata":{"x":1},"expiration_ttl":120}]`,
		`[{"key":"","value":1}]`, `{"key":"a"}`, `[`, `[{"key":"a","value":"b","expiration":1}]`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pairs, _, err := ParseBulkPut("bulk.json", data, 1_800_000_000)
		if err != nil {
			var fe *BulkFileError
			if !errors.As(err, &fe) && pairs != nil {
				t.Fatalf("error %v with %d pairs", err, len(pairs))
			}
			return
		}
		for i, p := range pairs {
			if p.Key == "" {
				t.Fatalf("pair %d has an empty key", i)
			}
		}
	})
}

// FuzzParseBulkKeys reads arbitrary bytes as a bulk get/delete file.
func FuzzParseBulkKeys(f *testing.F) {
	for _, s := range []string{`[]`, `["a","b"]`, `[{"name":"a"}]`, `[1]`, `"a"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseBulkKeys("keys.json", data)
		if err == nil {
			for i, k := range keys {
				if k == "" {
					t.Fatalf("key %d is empty", i)
				}
			}
		}
	})
}
