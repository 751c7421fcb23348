package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/cli"
	"github.com/celldgo/celld/internal/s3stub"
)

func TestVersion(t *testing.T) {
	cleanEnv(t)
	for _, flag := range []string{"--version", "-v"} {
		r := run(t, flag)
		wantCode(t, r, cli.ExitOK)
		if r.stdout != "celld vX\n" {
			t.Errorf("celld %s printed %q, want %q", flag, r.stdout, "celld vX\n")
		}
		if r.stderr != "" {
			t.Errorf("celld %s: stderr = %q", flag, r.stderr)
		}
	}
}

// The version printer writes to the command it is given, not to the
// first one built: two trees in one process keep their own versions and
// writers.
func TestVersionTwoTrees(t *testing.T) {
	for _, v := range []string{"v1.0.0", "v2.0.0"} {
		var out bytes.Buffer
		cmd := cli.New(v)
		cmd.Writer, cmd.ErrWriter = &out, &out
		if err := cmd.Run(context.Background(), []string{"celld", "--version"}); err != nil {
			t.Fatal(err)
		}
		if want := "celld " + v + "\n"; out.String() != want {
			t.Errorf("got %q, want %q", out.String(), want)
		}
	}
}

// TestBinary builds the real celld once, with the version stamped by the
// linker as the Makefile does, and checks what an operator's shell sees:
// stdout, stderr and the process exit status set by main.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the celld binary")
	}
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("no go tool to build celld with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "celld")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command(goTool, "build", "-o", bin, "-ldflags", "-X main.version=vtest", "github.com/celldgo/celld/cmd/celld")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// env is the process environment without anything celld reads, plus
	// credentials (the stub checks no signature; nothing listens at the
	// closed port).
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CELLD_") || strings.HasPrefix(k, "AWS_") || k == "S3_ENDPOINT" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "AWS_ACCESS_KEY_ID=access", "AWS_SECRET_ACCESS_KEY=secret",
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(t.TempDir(), "no-credentials"))

	type proc struct {
		stdout, stderr string
		status         int
	}
	celld := func(t *testing.T, args ...string) proc {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("celld %q did not finish within 60s", args)
		}
		status := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			status = ee.ExitCode()
		case err != nil:
			t.Fatalf("run celld %q: %v", args, err)
		}
		return proc{stdout.String(), stderr.String(), status}
	}

	t.Run("version", func(t *testing.T) {
		p := celld(t, "--version")
		if p.status != 0 || p.stdout != "celld vtest\n" || p.stderr != "" {
			t.Errorf("celld --version: status %d, stdout %q, stderr %q; want 0, %q, nothing", p.status, p.stdout, p.stderr, "celld vtest\n")
		}
	})

	t.Run("closed port", func(t *testing.T) {
		p := celld(t, "--bucket", "s3://celld-closed", "--endpoint", closedURL(t), "diagnose")
		if p.status != cli.ExitUsage {
			t.Errorf("exit status %d, want %d\nstderr:\n%s", p.status, cli.ExitUsage, p.stderr)
		}
		if p.stdout != "" {
			t.Errorf("stdout = %q, want nothing", p.stdout)
		}
		ls := lines(p.stderr)
		if len(ls) != 2 || !strings.HasPrefix(ls[0], "celld: diagnose s3://celld-closed") ||
			!strings.Contains(ls[0], "store unavailable") || !strings.HasPrefix(ls[1], "Try: ") || len(ls[1]) == len("Try: ") {
			t.Errorf("stderr is not an error line and a Try: line:\n%s", p.stderr)
		}
	})

	t.Run("ignores conditions", func(t *testing.T) {
		s := s3stub.Start(s3stub.Options{IgnoreConditions: true})
		defer s.Close()
		p := celld(t, "--bucket", "s3://celld-stub", "--endpoint", s.URL, "diagnose")
		if p.status != cli.ExitFailure {
			t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", p.status, cli.ExitFailure, p.stdout, p.stderr)
		}
		if !strings.HasPrefix(p.stdout, "FAIL bucket conditional write") || !strings.Contains(p.stdout, "ignores If-None-Match") {
			t.Errorf("stdout has no FAIL line naming the fault:\n%s", p.stdout)
		}
		if !strings.Contains(p.stderr, "ignores If-None-Match") || !strings.Contains(p.stderr, "\nTry: ") {
			t.Errorf("stderr does not name the fault and give a hint:\n%s", p.stderr)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{{"diagnose"}, {"diagnose", "--nope"}, {"nope"}} {
			p := celld(t, args...)
			if p.status != cli.ExitUsage || p.stdout != "" || !strings.HasPrefix(p.stderr, "celld: ") {
				t.Errorf("celld %q: status %d, stdout %q, stderr %q", args, p.status, p.stdout, p.stderr)
			}
		}
	})
}
