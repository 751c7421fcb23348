package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cli"
	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/internal/s3stub"
)

// The lines a healthy store prints, in order.
var (
	okCAS   = "ok bucket conditional write (create, reject-create, update, reject-stale)"
	okRange = "ok bucket range read (bytes=1000-1999 of a 4096-byte object, byte for byte)"
	okFleet = "ok fleet: 0 node lease(s)"
)

// result is one in-process run of the command tree.
type result struct {
	stdout, stderr string
	err            error
	code           int
}

// run builds the command tree as main does, with buffers for its writers,
// and runs it with args after "celld". The context's 60s limit (and a
// watchdog a little past it) keeps a stuck store from hanging the test.
func run(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := cli.New("vX")
	cmd.Writer, cmd.ErrWriter = &stdout, &stderr
	done := make(chan error, 1)
	go func() { done <- cmd.Run(ctx, append([]string{"celld"}, args...)) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("celld %q ignored its context and did not return", args)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err, code: cli.ExitCode(err)}
}

// lines splits output into lines, without the final newline.
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func wantLines(t *testing.T, r result, want ...string) {
	t.Helper()
	if got := lines(r.stdout); !slices.Equal(got, want) {
		t.Errorf("stdout lines:\n got %q\nwant %q", got, want)
	}
	if !strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("stdout %q does not end in a newline", r.stdout)
	}
}

func wantCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d (err: %v; hint: %q)\nstdout:\n%s\nstderr:\n%s",
			r.code, code, r.err, cli.HintOf(r.err), r.stdout, r.stderr)
	}
}

// cleanEnv unsets everything the command reads from the environment, for
// the test's duration, so the developer's shell cannot change the result.
// Credentials come only from the environment: no shared file, no profile.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{
		"CELLD_BUCKET", "S3_ENDPOINT", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_PROFILE",
	} {
		t.Setenv(k, "") // restores the old value when t ends
		os.Unsetenv(k)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/no-credentials")
}

// creds sets the credentials the S3 client will use.
func creds(t *testing.T, access, secret string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
}

// closedURL returns an http URL on 127.0.0.1 where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// jsonReport is the part of the --json wire format these tests rely on,
// spelled out so a renamed field fails here. (A lease carries more fields
// than its key; they belong to the fleet's tests.)
type jsonReport struct {
	OK     bool   `json:"ok"`
	Bucket string `json:"bucket"`
	Checks []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Detail string `json:"detail"`
		Fault  string `json:"fault"`
	} `json:"checks"`
	Leases []struct {
		Key string `json:"key"`
	} `json:"leases"`
}

func parseJSON(t *testing.T, r result) jsonReport {
	t.Helper()
	var rep jsonReport
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("--json printed more than one value:\n%s", r.stdout)
	}
	return rep
}

// wantHealthyJSON checks a --json report of a store that passed.
func wantHealthyJSON(t *testing.T, rep jsonReport, bucketWant string) {
	t.Helper()
	if !rep.OK {
		t.Errorf("ok = false for a healthy store: %+v", rep)
	}
	if !strings.HasPrefix(rep.Bucket, bucketWant) {
		t.Errorf("bucket = %q, want prefix %q", rep.Bucket, bucketWant)
	}
	type nsd struct{ name, status, detail string }
	var got []nsd
	for _, c := range rep.Checks {
		got = append(got, nsd{c.Name, c.Status, c.Detail})
		if c.Fault != "" {
			t.Errorf("check %q has a fault: %q", c.Name, c.Fault)
		}
	}
	want := []nsd{
		{"bucket conditional write", "ok", "create, reject-create, update, reject-stale"},
		{"bucket range read", "ok", "bytes=1000-1999 of a 4096-byte object, byte for byte"},
		{"fleet", "ok", "0 node lease(s)"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("checks:\n got %+v\nwant %+v", got, want)
	}
	if rep.Leases == nil || len(rep.Leases) != 0 {
		t.Errorf("leases = %#v, want an empty list", rep.Leases)
	}
}

// --- file:// -----------------------------------------------------------

func TestDiagnoseFile(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	r := run(t, "--bucket", "file://"+dir, "diagnose")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, okCAS, okRange, okFleet)
	if r.stderr != "" {
		t.Errorf("stderr = %q, want empty", r.stderr)
	}
	// The probes are cleaned up.
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if left, err := bucket.ListAll(context.Background(), s, ""); err != nil || len(left) != 0 {
		t.Errorf("objects left in the bucket: %v (err %v)", left, err)
	}
}

func TestDiagnoseFileJSON(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	r := run(t, "--bucket", "file://"+dir, "diagnose", "--json")
	wantCode(t, r, cli.ExitOK)
	wantHealthyJSON(t, parseJSON(t, r), "file://"+dir)
}

func TestDiagnoseFileFromEnv(t *testing.T) {
	cleanEnv(t)
	t.Setenv("CELLD_BUCKET", "file://"+t.TempDir())
	r := run(t, "diagnose")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, okCAS, okRange, okFleet)
}

func TestDiagnoseFileCountsLeases(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"nodes/a.json", "nodes/b.json", "other/c.json"} {
		if _, err := s.Put(context.Background(), k, []byte("{}"), bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, "--bucket", "file://"+dir, "diagnose")
	wantCode(t, r, cli.ExitOK)
	// One line per lease follows the fleet line; what it says about a
	// record is the fleet's business.
	got := lines(r.stdout)
	if want := []string{okCAS, okRange, "ok fleet: 2 node lease(s)"}; len(got) < 3 || !slices.Equal(got[:3], want) {
		t.Errorf("stdout lines:\n got %q\nwant %q first", got, want)
	}
	if len(got) != 5 || !strings.Contains(got[3], "nodes/a.json") || !strings.Contains(got[4], "nodes/b.json") {
		t.Errorf("stdout does not list the two leases:\n%s", r.stdout)
	}

	r = run(t, "--bucket", "file://"+dir, "diagnose", "--json")
	wantCode(t, r, cli.ExitOK)
	rep := parseJSON(t, r)
	var keys []string
	for _, l := range rep.Leases {
		keys = append(keys, l.Key)
	}
	if want := []string{"nodes/a.json", "nodes/b.json"}; !slices.Equal(keys, want) {
		t.Errorf("leases = %q, want %q", keys, want)
	}
}

// --- MinIO -------------------------------------------------------------

// minioBucket returns a fresh bucket on the shared MinIO server, with the
// server's credentials in the environment.
func minioBucket(t *testing.T) (*miniotest.Server, string) {
	t.Helper()
	cleanEnv(t)
	srv := miniotest.Shared(t)
	name := srv.NewBucket(t)
	creds(t, srv.AccessKey, srv.SecretKey)
	return srv, name
}

// keys lists every object in bkt that starts with prefix.
func keys(t *testing.T, srv *miniotest.Server, bkt, prefix string) []string {
	t.Helper()
	c, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ks []string
	for o := range c.ListObjects(ctx, bkt, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list %s/%s: %v", bkt, prefix, o.Err)
		}
		ks = append(ks, o.Key)
	}
	return ks
}

func TestDiagnoseMinIO(t *testing.T) {
	srv, bkt := minioBucket(t)
	r := run(t, "--bucket", "s3://"+bkt, "--endpoint", srv.Endpoint, "diagnose")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, okCAS, okRange, okFleet)
	if left := keys(t, srv, bkt, "probe/"); len(left) != 0 {
		t.Errorf("probe objects left behind: %q", left)
	}
	if left := keys(t, srv, bkt, ""); len(left) != 0 {
		t.Errorf("objects left behind: %q", left)
	}
}

func TestDiagnoseMinIOEndpointFromEnv(t *testing.T) {
	srv, bkt := minioBucket(t)
	t.Setenv("S3_ENDPOINT", srv.Endpoint)
	t.Setenv("CELLD_BUCKET", "s3://"+bkt+"/some/prefix")
	r := run(t, "diagnose")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, okCAS, okRange, okFleet)
	if left := keys(t, srv, bkt, ""); len(left) != 0 {
		t.Errorf("objects left behind: %q", left)
	}
}

func TestDiagnoseMinIOJSON(t *testing.T) {
	srv, bkt := minioBucket(t)
	r := run(t, "--bucket", "s3://"+bkt, "--endpoint", srv.Endpoint, "diagnose", "--json")
	wantCode(t, r, cli.ExitOK)
	wantHealthyJSON(t, parseJSON(t, r), "s3://"+bkt+" at "+srv.Endpoint)
	if left := keys(t, srv, bkt, "probe/"); len(left) != 0 {
		t.Errorf("probe objects left behind: %q", left)
	}
}

func TestDiagnoseMinIOReadOnly(t *testing.T) {
	srv, bkt := minioBucket(t)
	r := run(t, "--bucket", "s3://"+bkt, "--endpoint", srv.Endpoint, "diagnose", "--read-only")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r,
		"ok bucket read access (list)",
		"skip bucket conditional write (--read-only)",
		"skip bucket range read (--read-only)",
		okFleet,
	)
	if got := keys(t, srv, bkt, ""); len(got) != 0 {
		t.Errorf("--read-only wrote to the bucket: %q", got)
	}

	r = run(t, "--bucket", "s3://"+bkt, "--endpoint", srv.Endpoint, "diagnose", "--read-only", "--json")
	wantCode(t, r, cli.ExitOK)
	rep := parseJSON(t, r)
	if !rep.OK || len(rep.Checks) != 4 || rep.Checks[1].Status != "skip" || rep.Checks[2].Status != "skip" {
		t.Errorf("--read-only --json report: %+v", rep)
	}
	if got := keys(t, srv, bkt, ""); len(got) != 0 {
		t.Errorf("--read-only --json wrote to the bucket: %q", got)
	}
}

func TestDiagnoseMinIOWrongCredentials(t *testing.T) {
	srv, bkt := minioBucket(t)
	creds(t, srv.AccessKey, "wrong"+srv.SecretKey)
	for _, extra := range [][]string{nil, {"--read-only"}} {
		args := append([]string{"--bucket", "s3://" + bkt, "--endpoint", srv.Endpoint, "diagnose"}, extra...)
		r := run(t, args...)
		wantCode(t, r, cli.ExitUsage)
		if !errors.Is(r.err, bucket.ErrDenied) {
			t.Errorf("%q: error %v does not wrap bucket.ErrDenied", extra, r.err)
		}
		if h := cli.HintOf(r.err); !strings.Contains(h, "credentials") {
			t.Errorf("%q: hint %q does not mention credentials", extra, h)
		}
		if r.stdout != "" {
			t.Errorf("%q: stdout = %q, want nothing", extra, r.stdout)
		}
	}
	if got := keys(t, srv, bkt, ""); len(got) != 0 {
		t.Errorf("objects in the bucket: %q", got)
	}
}

func TestDiagnoseMinIOMissingBucket(t *testing.T) {
	srv, _ := minioBucket(t)
	r := run(t, "--bucket", "s3://celld-test-no-such-bucket", "--endpoint", srv.Endpoint, "diagnose")
	wantCode(t, r, cli.ExitUsage)
	if !errors.Is(r.err, bucket.ErrNoBucket) {
		t.Errorf("error %v does not wrap bucket.ErrNoBucket", r.err)
	}
	if h := cli.HintOf(r.err); !strings.Contains(h, "create the bucket") {
		t.Errorf("hint %q", h)
	}
}

// --- broken stores (s3stub) -------------------------------------------

func stub(t *testing.T, o s3stub.Options) *s3stub.Server {
	t.Helper()
	cleanEnv(t)
	creds(t, "stub-access", "stub-secret") // the stub checks no signature
	s := s3stub.Start(o)
	t.Cleanup(s.Close)
	return s
}

// stubKeys lists every object in the stub's celld-stub bucket.
func stubKeys(t *testing.T, s *s3stub.Server) []string {
	t.Helper()
	st, err := bucket.NewS3(bucket.S3Config{Bucket: "celld-stub", Endpoint: s.URL,
		Creds: credentials.NewStaticV4("stub-access", "stub-secret", "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs, err := bucket.ListAll(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

func TestDiagnoseStubHealthy(t *testing.T) {
	s := stub(t, s3stub.Options{})
	r := run(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose")
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, okCAS, okRange, okFleet)
	if left := stubKeys(t, s); len(left) != 0 {
		t.Errorf("objects left behind: %q", left)
	}
}

func TestDiagnoseStubIgnoresConditions(t *testing.T) {
	const fault = "store accepted a create of an existing object: it ignores If-None-Match: *"
	s := stub(t, s3stub.Options{IgnoreConditions: true})
	r := run(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose")
	wantCode(t, r, cli.ExitFailure)
	wantLines(t, r,
		"FAIL bucket conditional write (create, reject-create, update, reject-stale): "+fault,
		okRange,
		okFleet,
	)
	if !strings.Contains(r.err.Error(), "ignores If-None-Match") {
		t.Errorf("error %q does not name the fault", r.err)
	}
	if want := "store s3://celld-stub at " + s.URL + " cannot be trusted: " + fault; r.err.Error() != want {
		t.Errorf("error:\n got %q\nwant %q", r.err, want)
	}
	if cli.HintOf(r.err) == "" {
		t.Error("no hint")
	}
	if left := stubKeys(t, s); len(left) != 0 {
		t.Errorf("objects left behind: %q", left)
	}

	r = run(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose", "--json")
	wantCode(t, r, cli.ExitFailure)
	rep := parseJSON(t, r)
	if rep.OK || len(rep.Checks) != 3 || rep.Checks[0].Status != "fail" || rep.Checks[0].Fault != fault {
		t.Errorf("--json report: %+v", rep)
	}
}

func TestDiagnoseStubIgnoresRange(t *testing.T) {
	const fault = "store ignores the Range header: it returned the whole object"
	s := stub(t, s3stub.Options{IgnoreRange: true})
	r := run(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose")
	wantCode(t, r, cli.ExitFailure)
	wantLines(t, r,
		okCAS,
		"FAIL bucket range read (bytes=1000-1999 of a 4096-byte object, byte for byte): "+fault,
		okFleet,
	)
	if !strings.Contains(r.err.Error(), "ignores the Range header") {
		t.Errorf("error %q does not name the fault", r.err)
	}

	r = run(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose", "--json")
	wantCode(t, r, cli.ExitFailure)
	rep := parseJSON(t, r)
	if rep.OK || len(rep.Checks) != 3 || rep.Checks[1].Status != "fail" || rep.Checks[1].Fault != fault {
		t.Errorf("--json report: %+v", rep)
	}
}

// --- an unreachable store ----------------------------------------------

func TestDiagnoseClosedPort(t *testing.T) {
	cleanEnv(t)
	creds(t, "access", "secret")
	ep := closedURL(t)
	for _, extra := range [][]string{nil, {"--read-only"}, {"--json"}} {
		args := append([]string{"--bucket", "s3://celld-closed", "--endpoint", ep, "diagnose"}, extra...)
		r := run(t, args...)
		wantCode(t, r, cli.ExitUsage)
		if !errors.Is(r.err, bucket.ErrUnavailable) || !strings.Contains(r.err.Error(), "store unavailable") {
			t.Errorf("%q: error %q does not say the store is unavailable", extra, r.err)
		}
		if !strings.Contains(r.err.Error(), ep) {
			t.Errorf("%q: error %q does not name the endpoint", extra, r.err)
		}
		if h := cli.HintOf(r.err); h == "" || !strings.Contains(h, "--endpoint") {
			t.Errorf("%q: hint %q", extra, h)
		}
		if r.stdout != "" {
			t.Errorf("%q: stdout = %q, want nothing", extra, r.stdout)
		}
	}
}

// --- bad input ---------------------------------------------------------

func TestDiagnoseBadInput(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no bucket", []string{"diagnose"}, "CELLD_BUCKET"},
		{"empty bucket", []string{"--bucket", "", "diagnose"}, "CELLD_BUCKET"},
		{"gs scheme", []string{"--bucket", "gs://x", "diagnose"}, "unsupported scheme"},
		{"no scheme", []string{"--bucket", "mybucket", "diagnose"}, "missing scheme"},
		{"bad bucket name", []string{"--bucket", "s3://My_Bucket", "diagnose"}, "My_Bucket"},
		{"relative file path", []string{"--bucket", "file://rel/path", "diagnose"}, "absolute path"},
		{"ftp endpoint", []string{"--bucket", "s3://celld-x", "--endpoint", "ftp://x", "diagnose"}, `endpoint "ftp://x"`},
		{"endpoint without host", []string{"--bucket", "s3://celld-x", "--endpoint", "http://", "diagnose"}, "endpoint"},
		{"endpoint with file bucket", []string{"--bucket", "file://" + dir, "--endpoint", "http://127.0.0.1:9", "diagnose"}, "file://"},
		{"unknown root flag", []string{"--nope", "diagnose"}, "-nope"},
		{"unknown diagnose flag", []string{"--bucket", "file://" + dir, "diagnose", "--nope"}, "-nope"},
		{"unknown command", []string{"nope"}, `unknown command "nope"`},
		{"stray argument", []string{"--bucket", "file://" + dir, "diagnose", "s3://other"}, "takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			wantCode(t, r, cli.ExitUsage)
			if !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", r.err, tc.want)
			}
			// main prints the error; the command tree prints nothing
			// (no "Incorrect Usage", no help dump).
			if r.stdout != "" || r.stderr != "" {
				t.Errorf("output on a usage error:\nstdout: %q\nstderr: %q", r.stdout, r.stderr)
			}
		})
	}
	// Flags and usage errors are caught before any store is touched.
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("bucket dir touched by a usage error: %v (err %v)", ents, err)
	}
}

// Help is not an error.
func TestHelp(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{nil, {"--help"}, {"diagnose", "--help"}, {"help", "diagnose"}} {
		r := run(t, args...)
		wantCode(t, r, cli.ExitOK)
		if !strings.Contains(r.stdout, "USAGE:") {
			t.Errorf("celld %q printed no help:\n%s", args, r.stdout)
		}
	}
}
