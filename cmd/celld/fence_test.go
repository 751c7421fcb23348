package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/internal/miniotest"
)

func buildCelld(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "celld")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("build celld: %v\n%s", err, out)
	}
	return bin
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// servedNode starts `celld serve` against a private MinIO and waits until
// its lease is in the bucket.
func servedNode(t *testing.T, bin string, srv *miniotest.Server, ttlMS string) (*exec.Cmd, *syncBuf, chan error, bucket.Store) {
	t.Helper()
	name := srv.NewBucket(t)
	store, err := bucket.NewS3(bucket.S3Config{Bucket: name, Endpoint: srv.Endpoint, Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--bucket", "s3://"+name, "--endpoint", srv.Endpoint,
		"--node", "fence-test", "--listen", "127.0.0.1:0", "--internal-listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey, "CELLD_TTL_MS="+ttlMS)
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _, err := store.Get(ctx, core.LeaseKey("fence-test"))
		cancel()
		if err == nil {
			return cmd, stderr, exited, store
		}
		select {
		case err := <-exited:
			t.Fatalf("celld serve exited early: %v\n%s", err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no lease after 30s\n%s", stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// TestServe_FencesWhenTheBucketIsLost: stop MinIO under a leased node; it
// must exit 3 with the watchdog reason within TTL + 1 s.
func TestServe_FencesWhenTheBucketIsLost(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Start(t)
	const ttl = 3 * time.Second
	_, stderr, exited, _ := servedNode(t, bin, srv, "3000")
	srv.Stop()
	stopped := time.Now()
	select {
	case err := <-exited:
		took := time.Since(stopped)
		if code := exitCode(err); code != 3 {
			t.Fatalf("exit code %d, want 3\n%s", code, stderr)
		}
		if !strings.Contains(stderr.String(), "SELF-FENCE: node_lease_watchdog_fence") {
			t.Fatalf("stderr lacks the fence line:\n%s", stderr)
		}
		if took > ttl+time.Second {
			t.Fatalf("fenced %v after the bucket went away, want within TTL + 1s (%v)", took, ttl+time.Second)
		}
		t.Logf("fenced %v after the bucket stopped (TTL %v)", took.Round(time.Millisecond), ttl)
	case <-time.After(3 * ttl):
		t.Fatalf("node still running %v after the bucket stopped\n%s", 3*ttl, stderr)
	}
}

// TestServe_FencesWhenItsLeaseIsReplaced: overwrite the lease record by
// hand; the next renewal sees another session and fences.
func TestServe_FencesWhenItsLeaseIsReplaced(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Start(t)
	_, stderr, exited, store := servedNode(t, bin, srv, "3000")
	intruder := core.Lease{Node: "fence-test", Session: "intruder", Kind: "node", Expires: time.Now().Add(time.Hour).UnixMilli()}
	if _, err := store.Put(context.Background(), core.LeaseKey("fence-test"), core.Encode(intruder), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if code := exitCode(err); code != 3 {
			t.Fatalf("exit code %d, want 3\n%s", code, stderr)
		}
		if !strings.Contains(stderr.String(), "SELF-FENCE: node_lease_record_mismatch_fence") {
			t.Fatalf("stderr lacks the mismatch fence:\n%s", stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("node did not fence within 10s\n%s", stderr)
	}
	// It wrote nothing after fencing: the intruder's record stands.
	data, _, err := store.Get(context.Background(), core.LeaseKey("fence-test"))
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := core.DecodeLease(data); l.Session != "intruder" {
		t.Fatalf("lease after fence names %q, want the intruder's record untouched", l.Session)
	}
}

// TestServe_GracefulStopDeletesLease: SIGTERM → exit 0, lease removed.
func TestServe_GracefulStopDeletesLease(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	cmd, stderr, exited, store := servedNode(t, bin, srv, "3000")
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit after SIGINT\n%s", stderr)
	}
	if _, _, err := store.Get(context.Background(), core.LeaseKey("fence-test")); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("lease after graceful stop: %v, want gone", err)
	}
}
