package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/celldgo/celld/internal/miniotest"
)

// r2RoundTrip writes a random file of size bytes, runs `celld r2 object
// put` of it (--file: one streamed PUT; --pipe: a stream of unknown
// length, so a multipart upload in 8 MiB parts) and `get` of both against
// MinIO with no node running, checks the bytes come back identical and
// returns the largest peak RSS of the puts and of the gets, in bytes.
func r2RoundTrip(tb testing.TB, bin string, size int64) (putRSS, getRSS int64) {
	srv := miniotest.Shared(tb)
	name := srv.NewBucket(tb)
	dir := tb.TempDir()
	src := filepath.Join(dir, "in.bin")
	f, err := os.Create(src)
	if err != nil {
		tb.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyN(io.MultiWriter(f, h), rand.Reader, size); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	want := h.Sum(nil)
	run := func(args ...string) (string, int64) {
		cmd := exec.Command(bin, append([]string{"--bucket", "s3://" + name, "--endpoint", srv.Endpoint}, args...)...)
		if args[len(args)-1] == "--pipe" && args[2] == "put" {
			in, err := os.Open(src)
			if err != nil {
				tb.Fatal(err)
			}
			defer in.Close()
			cmd.Stdin = in // a stream of unknown length: uploaded in parts
		}
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			tb.Fatalf("celld %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return stderr.String(), ru.Maxrss * 1024 // KiB on Linux
	}
	msg, putRSS := run("r2", "object", "put", "media/in.bin", "--file", src, "--content-type", "application/octet-stream")
	if !strings.Contains(msg, `Creating object "in.bin" in bucket "media".`) || !strings.Contains(msg, "Upload complete.") {
		tb.Errorf("put said %q", msg)
	}
	_, pipeRSS := run("r2", "object", "put", "media/piped.bin", "--pipe")
	putRSS = max(putRSS, pipeRSS)
	for _, key := range []string{"in.bin", "piped.bin"} {
		out := filepath.Join(dir, "out-"+key)
		_, rss := run("r2", "object", "get", "media/"+key, "--file", out)
		getRSS = max(getRSS, rss)
		g, err := os.Open(out)
		if err != nil {
			tb.Fatal(err)
		}
		h.Reset()
		n, err := io.Copy(h, g)
		g.Close()
		if err != nil {
			tb.Fatal(err)
		}
		if n != size || !bytes.Equal(h.Sum(nil), want) {
			tb.Fatalf("%s: got %d bytes back (sha256 %x), want %d identical bytes", key, n, h.Sum(nil), size)
		}
	}
	return putRSS, getRSS
}

// TestR2CLI_PutGetThroughMinIO: a 96 MiB object goes up in parts and comes
// back byte-identical, and neither command holds it in memory.
func TestR2CLI_PutGetThroughMinIO(t *testing.T) {
	bin := buildCelld(t)
	putRSS, getRSS := r2RoundTrip(t, bin, 96<<20)
	const bound = 64 << 20
	if putRSS >= bound || getRSS >= bound {
		t.Errorf("peak RSS put %d MiB, get %d MiB; want both under %d MiB", putRSS>>20, getRSS>>20, bound>>20)
	}
	t.Logf("96 MiB object: peak RSS put %d MiB, get %d MiB", putRSS>>20, getRSS>>20)
}

// BenchmarkR2CLI_1GiB is the 1 GiB round trip; it reports each command's
// peak RSS.
func BenchmarkR2CLI_1GiB(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "celld")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build celld: %v\n%s", err, out)
	}
	for range b.N {
		putRSS, getRSS := r2RoundTrip(b, bin, 1<<30)
		b.ReportMetric(float64(putRSS>>20), "put-rss-MiB")
		b.ReportMetric(float64(getRSS>>20), "get-rss-MiB")
	}
}
