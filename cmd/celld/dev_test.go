package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if strings.HasPrefix(rel, ".celld") {
			return filepath.SkipDir
		}
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type devProc struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan error
}

func startDev(t *testing.T, bin, dir, addr string) *devProc {
	t.Helper()
	cmd := exec.Command(bin, "dev", dir, "--listen", addr)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &devProc{cmd: cmd, lines: make(chan string, 100), done: make(chan error, 1)}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	p.waitLine(t, "ready on http://"+addr)
	return p
}

func (p *devProc) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case err := <-p.done:
			t.Fatalf("celld dev exited (%v) before printing %q", err, prefix)
		case <-timeout:
			t.Fatalf("celld dev did not print %q", prefix)
		}
	}
}

func (p *devProc) stop(t *testing.T) {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("celld dev did not stop on SIGINT")
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestDev_CounterSurvivesRestart is the README's first command: celld dev
// on the counter example counts 1, 2, and carries on after a restart; a
// second celld dev on the same directory is refused; an edit redeploys.
func TestDev_CounterSurvivesRestart(t *testing.T) {
	bin := buildCelld(t)
	dir := t.TempDir()
	copyDir(t, "../../examples/counter", dir)
	addr := freePort(t)
	base := "http://" + addr

	p := startDev(t, bin, dir, addr)
	if got := get(t, base+"/"); got != "1\n" {
		t.Fatalf("first request = %q, want 1", got)
	}
	if got := get(t, base+"/"); got != "2\n" {
		t.Fatalf("second request = %q, want 2", got)
	}

	second := exec.Command(bin, "dev", dir, "--listen", freePort(t))
	out, err := second.CombinedOutput()
	if exitCode(err) != 2 || !strings.Contains(string(out), "another celld dev") {
		t.Fatalf("second celld dev: exit %d, output %q; want exit 2 and a refusal", exitCode(err), out)
	}

	p.stop(t)
	p = startDev(t, bin, dir, addr)
	if got := get(t, base+"/"); got != "3\n" {
		t.Fatalf("after restart = %q, want 3", got)
	}

	src := filepath.Join(dir, "src", "index.js")
	code, _ := os.ReadFile(src)
	edited := strings.Replace(string(code), "`${await stub.increment()}\\n`", "`count ${await stub.increment()}\\n`", 1)
	if edited == string(code) {
		t.Fatal("edit did not apply")
	}
	if err := os.WriteFile(src, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitLine(t, "redeployed counter version ")
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := get(t, base+"/")
		if strings.HasPrefix(got, "count ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new version not served: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.stop(t)
}
