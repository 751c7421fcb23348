package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

type serveProc struct {
	cmd      *exec.Cmd
	stderr   *syncBuf
	public   string
	internal string // http://host:port of the internal listener (/state)

	waitOnce sync.Once
	done     chan struct{} // closed once the process has exited and been reaped
}

// wait reaps the process once, whoever asks first; later calls just wait.
func (p *serveProc) wait() {
	p.waitOnce.Do(func() { p.cmd.Wait(); close(p.done) })
	<-p.done
}

// startServe runs `celld serve` as node on bucket with its own state dir
// (extra: more environment, NAME=value).
func startServe(t testing.TB, bin string, srv *miniotest.Server, bucketName, node, stateDir string, extra ...string) *serveProc {
	t.Helper()
	public, internal := freePort(t), freePort(t)
	cmd := exec.Command(bin, "serve", "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint,
		"--node", node, "--listen", public, "--internal-listen", internal)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey,
		"CELLD_TTL_MS=2000", "CELLD_WATCH="+stateDir)
	cmd.Env = append(cmd.Env, extra...)
	p := &serveProc{cmd: cmd, stderr: &syncBuf{}, public: "http://" + public, internal: "http://" + internal, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); p.wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.public + "/__celld/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not healthy in 30s\n%s", node, p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countOf(t *testing.T, url string) (int, bool) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	if resp.StatusCode != 200 {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(b.String()))
	return v, err == nil
}

// TestServe_AcknowledgedWritesSurviveKill9: a node acknowledges a stream
// of writes, is killed with SIGKILL and its local directory deleted; a
// second node takes the cell over from the bucket and every acknowledged
// write is there.
func TestServe_AcknowledgedWritesSurviveKill9(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	deployCmd := exec.Command(bin, "deploy", "../../examples/counter", "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	deployCmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	if out, err := deployCmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	dirA, dirB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	a := startServe(t, bin, srv, bucketName, "node-a", dirA)
	b := startServe(t, bin, srv, bucketName, "node-b", dirB)

	acked := 0
	for i := 1; i <= 25; i++ {
		v, ok := countOf(t, a.public+"/?name=rpo")
		if !ok || v != i {
			t.Fatalf("write %d on a: got %d (ok %v)\n%s", i, v, ok, a.stderr)
		}
		acked = v
	}
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.wait()
	if err := os.RemoveAll(dirA); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if v, ok := countOf(t, b.public+"/?name=rpo"); ok {
			if v != acked+1 {
				t.Fatalf("after takeover the count is %d, want %d: an acknowledged write was lost", v, acked+1)
			}
			t.Logf("node-b took over and continued at %d after %d acknowledged writes on node-a", v, acked)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node-b never took the cell over\n%s", b.stderr)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
