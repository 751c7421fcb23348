// Package miniotest runs MinIO servers for tests.
//
// Start gives a test its own server (which it may Stop to simulate an
// outage); Shared gives every test in the process one server, or the one
// the test script started (CELLD_TEST_S3_*). A missing MinIO binary fails
// the test: run `make test`, which installs it.
package miniotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Region is the region every server and bucket here uses.
const Region = "us-east-1"

// Binary finds the minio executable: $CELLD_MINIO_BIN, then minio on PATH,
// then $GOPATH/bin/minio (GOPATH defaulting to $HOME/go).
func Binary() (string, error) {
	if p := os.Getenv("CELLD_MINIO_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("CELLD_MINIO_BIN: %w", err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("minio not on PATH and no home directory: %w", err)
		}
		gopath = filepath.Join(home, "go")
	}
	// GOPATH may be a list; the first entry is where go install writes.
	gopath = filepath.SplitList(gopath)[0]
	p := filepath.Join(gopath, "bin", "minio")
	if runtime.GOOS == "windows" {
		p += ".exe"
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("minio not in $CELLD_MINIO_BIN, on PATH, or at %s", p)
	}
	return p, nil
}

// Server is a reachable MinIO server.
type Server struct {
	Endpoint  string // e.g. "http://127.0.0.1:40123"
	AccessKey string
	SecretKey string

	cmd  *exec.Cmd     // nil for a server this package did not start
	done chan struct{} // closed when cmd has exited
	once sync.Once
}

// Start runs a private MinIO server for t, killed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Shared returns the server for the whole test process: the one named by
// CELLD_TEST_S3_ENDPOINT, CELLD_TEST_S3_ACCESS_KEY and
// CELLD_TEST_S3_SECRET_KEY if all are set, else one started on first use.
// A started server lives until the process exits; on Linux the kernel
// kills it then (Pdeathsig), elsewhere it must be killed by hand.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.once.Do(func() {
		ep, ak, sk := os.Getenv("CELLD_TEST_S3_ENDPOINT"), os.Getenv("CELLD_TEST_S3_ACCESS_KEY"), os.Getenv("CELLD_TEST_S3_SECRET_KEY")
		if ep != "" && ak != "" && sk != "" {
			shared.s = &Server{Endpoint: ep, AccessKey: ak, SecretKey: sk}
			return
		}
		sweepStale()
		dir, err := os.MkdirTemp("", fmt.Sprintf("celld-minio-%d-", os.Getpid()))
		if err != nil {
			shared.err = err
			return
		}
		shared.s, shared.err = start(dir)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

// sweepStale removes data directories of shared servers whose test process
// is gone (their servers died with it).
func sweepStale() {
	if runtime.GOOS == "windows" {
		return // no signal 0 to probe a pid with
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "celld-minio-*-*"))
	for _, d := range dirs {
		f := strings.SplitN(filepath.Base(d), "-", 4)
		pid, err := strconv.Atoi(f[2])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

func start(dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, fmt.Errorf("no MinIO server binary (%v): run `make test`, which installs it, or set CELLD_MINIO_BIN", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	console, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  "http://" + addr,
		AccessKey: "celld" + randHex(6),
		SecretKey: randHex(20),
		done:      make(chan struct{}),
	}
	logs := &syncWriter{}
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--console-address", console, dir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	cmd.Stdout = logs
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setPdeathsig(cmd.SysProcAttr)
	s.cmd = cmd

	// Pdeathsig fires when the thread that forked the child exits, not
	// the process, so fork from a locked thread that outlives the server.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := cmd.Start(); err != nil {
			started <- err
			close(s.done)
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(s.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	if err := s.waitLive(30 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("minio at %s (data %s): %w\n%s", s.Endpoint, dir, err, logs.String())
	}
	return s, nil
}

func (s *Server) waitLive(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: time.Second}
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("server exited: %v", s.cmd.ProcessState)
		default:
		}
		resp, err := c.Get(s.Endpoint + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("health: %s", resp.Status)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not live after %v: %v", limit, last)
}

// Stop kills the server (SIGKILL) and waits for it to exit, so a test can
// see how its code behaves when the bucket vanishes. It is safe to call
// twice. Only a server from Start may be stopped.
func (s *Server) Stop() {
	if s.cmd == nil {
		panic("miniotest: Stop on a server this package did not start")
	}
	s.once.Do(func() {
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Kill()
		}
		<-s.done
	})
}

// PID is the server's process id, or 0 for a server this package did
// not start (benchmarks read its CPU time from /proc).
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Client returns a minio-go client for the server, with its root
// credentials.
func (s *Server) Client() (*minio.Client, error) {
	host, secure := strings.CutPrefix(s.Endpoint, "https://")
	if !secure {
		host = strings.TrimPrefix(s.Endpoint, "http://")
	}
	return minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Secure:       secure,
		Region:       Region,
		BucketLookup: minio.BucketLookupPath,
	})
}

// NewBucket creates an empty bucket with a random name and returns the
// name. The bucket is force-deleted, best effort, when t ends.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	name := "celld-test-" + randHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: Region}); err != nil {
		t.Fatalf("make bucket %s at %s: %v", name, s.Endpoint, err)
	}
	t.Cleanup(func() {
		if s.cmd != nil && s.stopped() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.RemoveBucketWithOptions(ctx, name, minio.RemoveBucketOptions{ForceDelete: true})
	})
	return name
}

func (s *Server) stopped() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// setPdeathsig asks Linux to SIGKILL the child when its parent dies. The
// field exists only in Linux's SysProcAttr, hence reflection rather than
// a per-OS file.
func setPdeathsig(a *syscall.SysProcAttr) {
	if runtime.GOOS != "linux" {
		return
	}
	f := reflect.ValueOf(a).Elem().FieldByName("Pdeathsig")
	if f.IsValid() && f.CanSet() && f.Type() == reflect.TypeOf(syscall.Signal(0)) {
		f.Set(reflect.ValueOf(syscall.Signal(9))) // SIGKILL
	}
}

// syncWriter collects the server's output for a failure message.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 64<<10 {
		w.b.Write(p)
	}
	return len(p), nil
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
