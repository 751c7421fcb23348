package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kv bulk get writes the file kv bulk put reads: binary values, metadata
// and expirations come back exactly, and stdout holds only the JSON.
func TestKVBulkGet_RoundTripsThroughBulkPut(t *testing.T) {
	dir := newKVDir(t)
	exp := time.Now().Add(time.Hour).Unix()
	binary := []byte{0, 1, 0x80, 0xfe, 0xff, 'a', 0xc3} // not UTF-8
	in := []map[string]any{
		{"key": "text", "value": "héllo \"q\" <b>&", "metadata": map[string]any{"n": 1.5, "s": []any{"x", nil}}},
		{"key": "bin", "value": base64.StdEncoding.EncodeToString(binary), "base64": true, "metadata": map[string]any{"type": "octets"}},
		{"key": "exp", "value": "soon", "expiration": exp},
		{"key": "ttl", "value": "later", "expiration_ttl": 3600},
		{"key": "empty", "value": ""},
	}
	inFile := filepath.Join(dir, "in.json")
	data, _ := json.Marshal(in)
	os.WriteFile(inFile, data, 0o644)
	keysFile := filepath.Join(dir, "keys.json")
	os.WriteFile(keysFile, []byte(`["text", "bin", "exp", "ttl", "empty", "absent"]`), 0o644)

	const a, b = "ns-a", "ns-b"
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, err := runKV(t, dir, append([]string{"kv", "bulk"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		return out, errOut
	}
	run("put", inFile, "--namespace-id", a)
	got1, errOut := run("get", keysFile, "--namespace-id", a)
	if !strings.HasSuffix(errOut, "Success!\n") || !strings.Contains(errOut, `"absent"`) {
		t.Errorf("stderr %q: want the missing key named and Success!", errOut)
	}
	var items []map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(got1))
	if err := dec.Decode(&items); err != nil {
		t.Fatalf("stdout is not one JSON array: %v\n%s", err, got1)
	}
	if dec.More() {
		t.Fatalf("stdout has more than the JSON array:\n%s", got1)
	}
	if len(items) != 5 {
		t.Fatalf("%d items, want 5 (the absent key left out):\n%s", len(items), got1)
	}
	byKey := map[string]map[string]json.RawMessage{}
	for _, it := range items {
		var k string
		json.Unmarshal(it["key"], &k)
		byKey[k] = it
	}
	var v string
	json.Unmarshal(byKey["bin"]["value"], &v)
	if dec, err := base64.StdEncoding.DecodeString(v); err != nil || !bytes.Equal(dec, binary) || string(byKey["bin"]["base64"]) != "true" {
		t.Errorf("binary value came out as %s (base64 %s)", byKey["bin"]["value"], byKey["bin"]["base64"])
	}
	if _, ok := byKey["text"]["base64"]; ok {
		t.Errorf("a text value is marked base64: %v", byKey["text"])
	}
	if string(byKey["text"]["metadata"]) == "" || string(byKey["exp"]["expiration"]) != jsonNum(exp) {
		t.Errorf("metadata or expiration lost:\n%s", got1)
	}
	var ttlExp int64
	json.Unmarshal(byKey["ttl"]["expiration"], &ttlExp)
	if ttlExp < exp-5 || ttlExp > exp+5 {
		t.Errorf("the TTL key's expiration is %d, want about %d", ttlExp, exp)
	}

	// Feed it back into another namespace and read it out again.
	outFile := filepath.Join(dir, "export.json")
	os.WriteFile(outFile, []byte(got1), 0o644)
	if _, errOut := run("put", outFile, "--namespace-id", b); strings.Contains(errOut, "warning") {
		t.Errorf("bulk put warned about bulk get's own file: %s", errOut)
	}
	got2, _ := run("get", keysFile, "--namespace-id", b)
	if got2 != got1 {
		t.Errorf("second export differs from the first:\n%s\nvs\n%s", got2, got1)
	}
	raw, _, err := runKV(t, dir, "kv", "key", "get", "bin", "--namespace-id", b)
	if err != nil || raw != string(binary) {
		t.Errorf("key get bin after the round trip = %q (%v), want %q", raw, err, binary)
	}
}

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }
