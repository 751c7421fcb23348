package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/kv"
)

const kvTestNS = "0123456789abcdef0123456789abcdef"

// runKV runs celld with args against the file:// bucket in dir and
// returns stdout, stderr and the error.
func runKV(t testing.TB, dir string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter, cmd.Reader = &out, &errOut, strings.NewReader("")
	err := cmd.Run(context.Background(), append([]string{"celld", "--bucket", "file://" + filepath.Join(dir, "bucket")}, args...))
	return out.String(), errOut.String(), err
}

// kvClient reaches the namespace the way a command does; the tool lease
// is released when the test ends.
func kvClient(t testing.TB, dir string) *kv.Client {
	t.Helper()
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	c, done, err := g.cellCaller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := done(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return kv.NewClient(c, kvTestNS)
}

func newKVDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bucket"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bulkItem is one item of a generated bulk put file with what it should
// store.
type bulkItem struct {
	Key           string          `json:"key"`
	Value         string          `json:"value"`
	Base64        bool            `json:"base64,omitempty"`
	Expiration    int64           `json:"expiration,omitempty"`
	ExpirationTTL int64           `json:"expiration_ttl,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`

	bytes []byte // the value as stored
}

// genBulk makes n pairs: every third a base64 binary value, every fifth
// with metadata, every seventh a TTL and every eleventh an absolute
// expiration.
func genBulk(n int, seed uint64, nowSec int64) []bulkItem {
	r := rand.New(rand.NewPCG(seed, 1))
	items := make([]bulkItem, n)
	for i := range items {
		it := &items[i]
		it.Key = fmt.Sprintf("key:%06d:%x", i, r.Uint32())
		if i%3 == 0 {
			b := make([]byte, 1+r.IntN(300))
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			it.bytes, it.Value, it.Base64 = b, base64.StdEncoding.EncodeToString(b), true
		} else {
			it.Value = fmt.Sprintf("value %d ✓ %s", i, strings.Repeat("x", r.IntN(50)))
			it.bytes = []byte(it.Value)
		}
		if i%5 == 0 {
			it.Metadata = json.RawMessage(fmt.Sprintf(`{"i":%d,"tag":"t<%d>"}`, i, i%7))
		}
		if i%7 == 0 {
			it.ExpirationTTL = 3600 + int64(i)
		}
		if i%11 == 0 {
			it.Expiration = nowSec + 7200 + int64(i)
		}
	}
	return items
}

func writeBulkFile(t testing.TB, dir string, items []bulkItem) string {
	t.Helper()
	data, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pairs.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkStored reads every item back and compares value, metadata and
// expiration.
func checkStored(t *testing.T, c *kv.Client, items []bulkItem, before, after int64) {
	t.Helper()
	ctx := context.Background()
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key
	}
	entries, err := c.GetAll(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := c.ListAll(ctx, "key:")
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(items) {
		t.Fatalf("listed %d keys, want %d", len(listed), len(items))
	}
	bad := 0
	for i, it := range items {
		e := entries[i]
		problem := ""
		switch {
		case !e.Found:
			problem = "missing"
		case !bytes.Equal(e.Value, it.bytes):
			problem = fmt.Sprintf("value %q, want %q", e.Value, it.bytes)
		case string(e.Metadata) != string(it.Metadata):
			problem = fmt.Sprintf("metadata %s, want %s", e.Metadata, it.Metadata)
		case it.ExpirationTTL != 0 && (e.Expiration < before+it.ExpirationTTL || e.Expiration > after+it.ExpirationTTL):
			problem = fmt.Sprintf("expiration %d, want now+%d", e.Expiration, it.ExpirationTTL)
		case it.ExpirationTTL == 0 && e.Expiration != it.Expiration:
			problem = fmt.Sprintf("expiration %d, want %d", e.Expiration, it.Expiration)
		case listed[i].Name != it.Key || listed[i].Expiration != e.Expiration || string(listed[i].Metadata) != string(it.Metadata):
			problem = fmt.Sprintf("listed as %+v", listed[i])
		}
		if problem != "" {
			if bad++; bad <= 5 {
				t.Errorf("item %d (%s): %s", i, it.Key, problem)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d pairs wrong", bad, len(items))
	}
}

func TestKVBulkPut_TenThousandPairsLandExactly(t *testing.T) {
	dir := newKVDir(t)
	before := time.Now().Unix()
	items := genBulk(10_000, 7, before)
	file := writeBulkFile(t, dir, items)

	out, errOut, err := runKV(t, dir, "kv", "bulk", "put", file, "--namespace-id", kvTestNS)
	if err != nil {
		t.Fatalf("bulk put: %v\n%s", err, errOut)
	}
	after := time.Now().Unix()
	if out != "Success!\n" {
		t.Errorf("stdout %q", out)
	}
	if want := "Uploaded 100% (10,000 out of 10,000)\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// The command released the namespace's cell when it finished.
	s, _ := (&globals{Bucket: "file://" + filepath.Join(dir, "bucket")}).openStore()
	ci, err := fleet.LookupCell(context.Background(), s, kv.CellName(kvTestNS), time.Now().UnixMilli())
	if err != nil || !ci.Own.Released {
		t.Errorf("namespace cell after the command: %+v, %v", ci, err)
	}

	t.Run("every pair is stored exactly", func(t *testing.T) {
		checkStored(t, kvClient(t, dir), items, before, after)
	})
	t.Run("running the file again changes nothing", func(t *testing.T) {
		if _, errOut, err := runKV(t, dir, "kv", "bulk", "put", file, "--namespace-id", kvTestNS); err != nil {
			t.Fatalf("rerun: %v\n%s", err, errOut)
		}
		checkStored(t, kvClient(t, dir), items, before, time.Now().Unix())
	})
}

func TestKVBulkPut_MalformedFileWritesNothing(t *testing.T) {
	dir := newKVDir(t)
	items := genBulk(30, 3, time.Now().Unix())
	var raw []json.RawMessage
	for _, it := range items {
		b, _ := json.Marshal(it)
		raw = append(raw, b)
	}
	raw[4] = json.RawMessage(`{"key":"k4","value":17}`)
	raw[9] = json.RawMessage(`{"key":"k9","value":"v","expiration_ttl":10}`)
	raw[20] = json.RawMessage(`{"key":"k20","value":"not base64!","base64":true}`)
	raw[25] = json.RawMessage(`"just a string"`)
	raw[26] = json.RawMessage(`{"key":"k26","value":"v","surprise":1}`)
	data, _ := json.Marshal(raw)
	file := filepath.Join(dir, "bad.json")
	os.WriteFile(file, data, 0o644)

	_, errOut, err := runKV(t, dir, "kv", "bulk", "put", file, "--namespace-id", kvTestNS)
	if ExitCode(err) != ExitUsage {
		t.Fatalf("exit %d (%v), want %d", ExitCode(err), err, ExitUsage)
	}
	for _, want := range []string{
		`Unexpected JSON input from "bad.json".`,
		`The item at index 4 is {"key":"k4","value":17}`,
		`The item at index 9 (key "k9") is refused: Invalid expiration_ttl of 10. Expiration TTL must be at least 60.`,
		`The item at index 20 (key "k20") has a value that is not valid base64.`,
		`The item at index 25 is "just a string"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !strings.Contains(errOut, `The item at index 26 contains unexpected properties: ["surprise"].`) {
		t.Errorf("no warning for unexpected properties: %q", errOut)
	}
	keys, err := kvClient(t, dir).ListAll(context.Background(), "")
	if err != nil || len(keys) != 0 {
		t.Errorf("the namespace holds %d keys (%v), want none", len(keys), err)
	}
}

// countingCaller counts requests.
type countingCaller struct {
	cell.Caller
	n atomic.Int64
}

func (c *countingCaller) Call(ctx context.Context, name string, req []byte) ([]byte, error) {
	c.n.Add(1)
	return c.Caller.Call(ctx, name, req)
}

func TestKVBulkPut_InterruptionLeavesWholeBatches(t *testing.T) {
	dir := newKVDir(t)
	items := genBulk(25_000, 11, time.Now().Unix())
	pairs := make([]kv.Pair, len(items))
	for i, it := range items {
		pairs[i] = kv.Pair{Key: it.Key, Value: it.bytes}
	}
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	c, done, err := g.cellCaller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = kv.NewClient(c, kvTestNS).PutAll(ctx, pairs, func(done, total int) { cancel() })
	if err == nil {
		t.Fatal("PutAll finished despite the interruption")
	}
	if err := done(context.Background()); err != nil {
		t.Fatal(err)
	}
	keys, err := kvClient(t, dir).ListAll(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(keys); n == 0 || n%kv.MaxBatchPairs != 0 || n == len(items) {
		t.Fatalf("%d keys landed: want a whole number of %d-pair batches, not all", n, kv.MaxBatchPairs)
	}
	for i, k := range keys {
		if k.Name != items[i].Key {
			t.Fatalf("key %d is %s, want %s (the batches in order)", i, k.Name, items[i].Key)
		}
	}
}

func TestKVKeyCommands(t *testing.T) {
	dir := newKVDir(t)
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "wrangler.jsonc"), []byte(`{
  // celld kv reads only kv_namespaces; other keys are no concern of it.
  "name": "w", "routes": ["example.com/*"],
  "kv_namespaces": [
    { "binding": "KV", "id": "`+kvTestNS+`" },
    { "binding": "BOTH", "id": "aaaa", "preview_id": "bbbb" }, // trailing commas too
  ],
}`), 0o644)
	ns := []string{"--cwd", proj, "--binding", "KV"}
	run := func(args ...string) (string, string, error) {
		t.Helper()
		return runKV(t, dir, append([]string{"kv"}, args...)...)
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, errOut, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut)
		}
		return out
	}

	out := mustRun(append([]string{"key", "put", "greeting", "hello", "--metadata", `{"a":1}`, "--ttl", "600"}, ns...)...)
	if want := `Writing the value "hello" to key "greeting" on namespace binding: "KV" (id: "` + kvTestNS + `") with metadata "{\"a\":1}".` + "\n"; out != want {
		t.Errorf("put printed %q, want %q", out, want)
	}
	valueFile := filepath.Join(dir, "value.bin")
	os.WriteFile(valueFile, []byte{0, 1, 254, 255}, 0o644)
	mustRun(append([]string{"key", "put", "bin", "--path", valueFile}, ns...)...)

	if got := mustRun(append([]string{"key", "get", "greeting"}, ns...)...); got != "hello" {
		t.Errorf("get printed %q", got)
	}
	if got := mustRun("key", "get", "greeting", "--text", "--namespace-id", kvTestNS); got != "hello\n" {
		t.Errorf("get --text printed %q", got)
	}
	if got := mustRun(append([]string{"key", "get", "bin"}, ns...)...); got != "\x00\x01\xfe\xff" {
		t.Errorf("get of binary printed %q", got)
	}
	if _, _, err := run(append([]string{"key", "get", "absent"}, ns...)...); ExitCode(err) != ExitFailure || err.Error() != "Value not found" {
		t.Errorf("get of a missing key: exit %d, %v", ExitCode(err), err)
	}

	list := mustRun(append([]string{"key", "list"}, ns...)...)
	var keys []map[string]any
	if err := json.Unmarshal([]byte(list), &keys); err != nil || len(keys) != 2 {
		t.Fatalf("list printed %q (%v)", list, err)
	}
	if keys[0]["name"] != "bin" || len(keys[0]) != 1 || keys[1]["name"] != "greeting" ||
		keys[1]["expiration"] == nil || fmt.Sprint(keys[1]["metadata"]) != "map[a:1]" {
		t.Errorf("list: %s", list)
	}
	if !strings.Contains(list, "[\n  {\n    \"name\": \"bin\"\n  },") {
		t.Errorf("list is not indented as JSON.stringify(keys, null, 2):\n%s", list)
	}

	// The list output feeds bulk get and bulk delete.
	keysFile := filepath.Join(dir, "keys.json")
	os.WriteFile(keysFile, []byte(list), 0o644)
	os.WriteFile(filepath.Join(dir, "more.json"), []byte(`["greeting", "nope"]`), 0o644)
	got, errOut, err := run(append([]string{"bulk", "get", filepath.Join(dir, "more.json"), "--format", "wrangler"}, ns...)...)
	if want := "{\n  \"greeting\": {\n    \"value\": \"hello\"\n  },\n  \"nope\": {\n    \"value\": null\n  }\n}\n"; err != nil || got != want || errOut != "Success!\n" {
		t.Errorf("bulk get --format wrangler printed %q (stderr %q, %v), want %q", got, errOut, err, want)
	}
	if _, _, err := run(append([]string{"bulk", "delete", keysFile}, ns...)...); ExitCode(err) != ExitUsage {
		t.Errorf("bulk delete without a terminal or --force: exit %d (%v)", ExitCode(err), err)
	}
	out, errOut, err = run(append([]string{"bulk", "delete", keysFile, "-f"}, ns...)...)
	if err != nil || out != "Success!\n" || errOut != "Deleted 100% (2 out of 2)\n" {
		t.Errorf("bulk delete: %v, %q, %q", err, out, errOut)
	}
	if got := mustRun(append([]string{"key", "list"}, ns...)...); got != "[]\n" {
		t.Errorf("after bulk delete list printed %q", got)
	}

	t.Run("namespace selection", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"key", "list"}, "Exactly one of the arguments binding and namespace-id is required"},
			{[]string{"key", "list", "--binding", "KV", "--namespace-id", "x"}, "Exactly one of the arguments binding and namespace-id is required"},
			{[]string{"key", "list", "--cwd", proj, "--binding", "NOPE"}, `A namespace with binding name "NOPE" was not found in the configured "kv_namespaces".`},
			{[]string{"key", "list", "--cwd", proj, "--binding", "BOTH"}, `BOTH has both a namespace ID and a preview ID. Specify "--preview" or "--preview false" to avoid writing data to the wrong namespace.`},
			{[]string{"key", "list", "--cwd", proj, "--binding", "KV", "--preview"}, "No preview ID found for KV."},
			{[]string{"key", "list", "--cwd", dir, "--binding", "KV"}, "--binding specified, but no config file was found."},
			{[]string{"key", "list", "--namespace-id", "bad/id"}, `namespace id "bad/id"`},
		} {
			_, _, err := run(tc.args...)
			if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), tc.want) {
				t.Errorf("%v: exit %d, %v; want %q", tc.args, ExitCode(err), err, tc.want)
			}
		}
		if out := mustRun("key", "put", "p", "v", "--cwd", proj, "--binding", "BOTH", "--preview"); !strings.Contains(out, `(id: "bbbb")`) {
			t.Errorf("--preview wrote to %q", out)
		}
		if out := mustRun("key", "put", "p", "v", "--cwd", proj, "--binding", "BOTH", "--preview=false"); !strings.Contains(out, `(id: "aaaa")`) {
			t.Errorf("--preview=false wrote to %q", out)
		}
	})
	t.Run("refusals are exit 1 with workerd's text", func(t *testing.T) {
		_, _, err := run(append([]string{"key", "put", "k", "v", "--ttl", "30"}, ns...)...)
		if ExitCode(err) != ExitFailure || err.Error() != "KV PUT failed: 400 Invalid expiration_ttl of 30. Expiration TTL must be at least 60." {
			t.Errorf("exit %d: %v", ExitCode(err), err)
		}
	})
}

// BenchmarkKVBulkPut writes 100,000 pairs (the 10,000-pair generator's
// mix) through the command's real path — tool lease on a file:// bucket,
// one transaction and one durable LTX upload per batch — and reports
// pairs/s and the requests used.
func BenchmarkKVBulkPut(b *testing.B) {
	const n = 100_000
	items := genBulk(n, 5, time.Now().Unix())
	pairs := make([]kv.Pair, n)
	for i, it := range items {
		pairs[i] = kv.Pair{Key: it.Key, Value: it.bytes, Metadata: it.Metadata}
		if it.ExpirationTTL != 0 {
			ttl := it.ExpirationTTL
			pairs[i].ExpirationTTL = &ttl
		}
	}
	var elapsed time.Duration
	var requests, writes int64
	for b.Loop() {
		b.StopTimer()
		dir := newKVDir(b)
		g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
		c, done, err := g.cellCaller(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		cc := &countingCaller{Caller: c}
		ws := &writeCounter{Store: c.(*reach).store}
		c.(*reach).store = ws
		b.StartTimer()
		start := time.Now()
		if _, err := kv.NewClient(cc, kvTestNS).PutAll(context.Background(), pairs, nil); err != nil {
			b.Fatal(err)
		}
		if err := done(context.Background()); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		requests += cc.n.Load()
		writes += ws.n.Load()
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "pairs/s")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	b.ReportMetric(float64(writes)/float64(b.N), "bucket-writes/op")
}

// writeCounter counts bucket writes (PUTs and DELETEs).
type writeCounter struct {
	bucket.Store
	n atomic.Int64
}

func (s *writeCounter) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	s.n.Add(1)
	return s.Store.Put(ctx, key, data, cond)
}

func (s *writeCounter) Delete(ctx context.Context, key string) error {
	s.n.Add(1)
	return s.Store.Delete(ctx, key)
}
