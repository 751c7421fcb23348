package cli_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cli"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls buf until it matches re or 20 s pass.
func waitFor(t *testing.T, buf *syncBuffer, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := rx.FindStringSubmatch(buf.String()); m != nil {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q in:\n%s", re, buf.String())
	return nil
}

const devWorker = `export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/throw") {
      fail();
    }
    console.log("hello from the worker", env.STAGE, env.TOKEN, env.EXTRA);
    console.warn("a warning");
    return new Response(env.STAGE);
  },
};

function fail() {
  throw new Error("boom");
}
`

func TestDev_ConsoleRequestLogEnvAndFailedChange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("wrangler.toml", "name = \"app\"\nmain = \"src/index.js\"\nworkers_dev = true\n[assets]\ndirectory = \"public\"\n[vars]\nSTAGE = \"top\"\n[env.staging.vars]\nSTAGE = \"staging\"\n")
	write("public/hello.txt", "first")
	write("src/index.js", devWorker)
	write(".dev.vars", "# local values\nTOKEN=\"from dev vars\"\n")
	write(".env", "TOKEN=from-dotenv-ignored\n")

	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	cmd := cli.New("vX")
	cmd.Writer, cmd.ErrWriter = &stdout, &stderr
	done := make(chan error, 1)
	go func() {
		done <- cmd.Run(ctx, []string{"celld", "dev", dir, "--listen", "127.0.0.1:0", "--env", "staging",
			"--var", "EXTRA:flag", "--persist-to", filepath.Join(t.TempDir(), "state")})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("celld dev did not stop")
		}
	}()
	base := waitFor(t, &stdout, `ready on (http://\S+)`)[1]
	if !strings.Contains(stderr.String(), "warning: ignored (they matter only on Cloudflare's network): workers_dev") {
		t.Errorf("no warning naming workers_dev in stderr:\n%s", stderr.String())
	}

	get := func(path string, hdr ...string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if len(hdr) == 2 {
			req.Header.Set(hdr[0], hdr[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || body != "staging" {
		t.Fatalf("GET /: %d %q", code, body)
	}
	waitFor(t, &stdout, `(?m)^hello from the worker staging from dev vars flag$`)
	waitFor(t, &stdout, `(?m)^GET / 200 \S+$`)
	waitFor(t, &stderr, `(?m)^a warning$`)

	code, body := get("/throw", "Accept", "text/html,application/xhtml+xml")
	if code != 500 || !strings.Contains(body, "<h1>500: the Worker threw an exception</h1>") || !strings.Contains(body, "Error: boom") || !strings.Contains(body, "src/index.js:14:") {
		t.Errorf("browser GET /throw: %d %q, want the HTML error page", code, body)
	}
	if code, body := get("/throw"); code != 500 || body != "Internal Server Error" {
		t.Errorf("GET /throw: %d %q", code, body)
	}
	// The stack names the source file and line of the throw (line 14).
	waitFor(t, &stderr, `✘ \[ERROR\] uncaught exception in fetch handler: Error: boom`)
	waitFor(t, &stderr, `src/index\.js:14:`)

	// celld dev serves the asset directory live.
	if code, body := get("/hello.txt"); code != 200 || body != "first" {
		t.Errorf("GET /hello.txt: %d %q", code, body)
	}
	write("public/hello.txt", "second")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, body := get("/hello.txt"); body == "second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a changed asset was not served within 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A change that builds but throws at startup is reported once; the
	// previous version keeps serving.
	write("src/index.js", "throw new Error('broken at startup');\nexport default {};\n")
	waitFor(t, &stderr, `does not start \(still serving the previous version\)`)
	if code, body := get("/"); code != 200 || body != "staging" {
		t.Errorf("after a failed change: %d %q, want the previous version", code, body)
	}
	time.Sleep(600 * time.Millisecond)
	if n := strings.Count(stderr.String(), "does not start"); n != 1 {
		t.Errorf("the failed change was reported %d times, want once", n)
	}
	// A change that does not build is reported too.
	write("src/index.js", "export default { fetch( };\n")
	waitFor(t, &stderr, `the change does not build`)
}
