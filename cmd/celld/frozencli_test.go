package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

// TestCLI_KVGetFromFrozenOwner: `celld kv key get` while the node owning
// the namespace's cell is frozen (SIGSTOP: its socket accepts, nothing
// answers, its lease is no longer renewed) finishes about one lease TTL
// after it started, with the value, by taking the cell over from the
// bucket — not at the owner's expiry plus the 5 s skew margin, nor at a
// minutes-long HTTP timeout. Woken, the old owner fences (exit 3).
func TestCLI_KVGetFromFrozenOwner(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	deploy := exec.Command(bin, "deploy", "../../examples/notes", "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	deploy.Env = env
	if out, err := deploy.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	const ttl = 2 * time.Second // startServe's CELLD_TTL_MS
	a := startServe(t, bin, srv, bucketName, "node-a", filepath.Join(t.TempDir(), "a"))
	for i := 1; i <= 3; i++ {
		if v, ok := countOf(t, a.public+"/visits"); !ok || v != i {
			t.Fatalf("visit %d: %d %v\n%s", i, v, ok, a.stderr)
		}
	}
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.cmd.Process.Signal(syscall.SIGCONT) })
	waitStopped(t, a.cmd.Process.Pid)

	get := exec.Command(bin, "kv", "key", "get", "visits", "--namespace-id", "5e0f4b1c2d3a49e8b7c6d5e4f3a2b1c0", "--text",
		"--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	get.Env = env
	var stderr strings.Builder
	get.Stderr = &stderr
	start := time.Now()
	out, err := get.Output()
	took := time.Since(start)
	if err != nil || strings.TrimSpace(string(out)) != "3" {
		t.Fatalf("kv key get with the owner frozen: %q %v after %v\n%s", out, err, took, stderr.String())
	}
	// The old rule (expiry + 5 s margin) took at least 5.6 s here.
	if took > ttl+2*time.Second {
		t.Fatalf("kv key get took %v with the owner frozen; want about the owner's %v TTL (at most %v)", took, ttl, ttl+2*time.Second)
	}
	t.Logf("kv key get with the owner frozen (TTL %v): %v", ttl, took.Round(time.Millisecond))

	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	go a.wait()
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("node-a still running 10 s after SIGCONT\n%s", a.stderr)
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("node-a exit %d after waking, want 3 (self-fence)\n%s", code, a.stderr)
	}
}
