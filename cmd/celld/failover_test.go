package main

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

// TestFleet_FailoverIs503WithRetryAfter: node A owns 20 cells and is
// killed with kill -9 (state deleted). Clients keep asking node B for
// those cells. With B's takeover wait cut to 300 ms, well under the time
// B needs to count A dead, some requests fail meanwhile: each of them is
// 503 with Retry-After, never a 500, whether B forwarded it to the dead
// A or waited for the takeover; every cell then answers 200 from B with
// its count intact; and B logs the episode a few lines per cell, with no
// stack traces.
func TestFleet_FailoverIs503WithRetryAfter(t *testing.T) {
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	deployCounter(t, bin, srv, bucketName)
	tmp := t.TempDir()
	wait := "CELLD_TAKEOVER_WAIT_MS=300"
	a := startFleetNode(t, bin, srv, bucketName, "node-a", filepath.Join(tmp, "a"), wait)
	b := startFleetNode(t, bin, srv, bucketName, "node-b", filepath.Join(tmp, "b"), wait)
	const cells = 20
	client := freshClient(10 * time.Second)
	for i := range cells {
		for j, via := range []*fleetNode{a, b} { // A owns it; B reaches it through A
			if v, ok := fetch(client, fmt.Sprintf("%s/?name=f%d", via.public, i)).ack(); !ok || v != j+1 {
				t.Fatalf("cell f%d write %d via %s: %d %v\n%s", i, j+1, via.name, v, ok, a.stderr)
			}
		}
	}
	logBefore := len(b.stderr.String())
	a.kill9(t)
	killed := time.Now()

	type outcome struct {
		status     int
		retryAfter string
		body       string
	}
	var (
		mu       sync.Mutex
		byStatus = map[int]int{}
		bad      []string
		counts   = map[int]int{} // cell → first count B acknowledged
		served   time.Duration   // from the kill to the last cell's first 200
	)
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for i := range cells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := freshClient(5 * time.Second)
			for time.Now().Before(deadline) {
				resp, err := c.Get(fmt.Sprintf("%s/?name=f%d", b.public, i))
				if err != nil {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("f%d: %v", i, err))
					mu.Unlock()
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				o := outcome{resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(string(body))}
				mu.Lock()
				byStatus[o.status]++
				switch {
				case o.status == http.StatusOK:
					n, err := strconv.Atoi(o.body)
					if err != nil {
						bad = append(bad, fmt.Sprintf("f%d: 200 %q", i, o.body))
					}
					counts[i] = n
					served = max(served, time.Since(killed))
					mu.Unlock()
					return
				case o.status == http.StatusServiceUnavailable:
					if s, err := strconv.Atoi(o.retryAfter); err != nil || s < 1 {
						bad = append(bad, fmt.Sprintf("f%d: 503 with Retry-After %q (%q)", i, o.retryAfter, o.body))
					}
				default:
					bad = append(bad, fmt.Sprintf("f%d: %d %q", i, o.status, o.body))
				}
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("during the failover (statuses %v):\n%s\n%s", byStatus, strings.Join(bad, "\n"), b.stderr)
	}
	for i := range cells {
		if counts[i] != 3 {
			t.Fatalf("cell f%d answered %d from B after the failover, want 3 (two writes acknowledged before); statuses %v\n%s", i, counts[i], byStatus, b.stderr)
		}
	}
	if byStatus[http.StatusServiceUnavailable] == 0 {
		t.Fatalf("no request failed during the failover (statuses %v): the test did not exercise the gap", byStatus)
	}
	logs := b.stderr.String()[logBefore:]
	if strings.Contains(logs, "goroutine ") {
		t.Fatalf("B logged a stack trace during the failover:\n%s", logs)
	}
	if n := strings.Count(logs, "\n"); n > 3*cells {
		t.Fatalf("B logged %d lines for %d requests over %d cells; want at most a few per cell:\n%s", n, byStatus[503]+byStatus[200], cells, logs)
	}
	t.Logf("failover: statuses %v; every cell served by B %v after the kill; B logged %d lines", byStatus, served.Round(time.Millisecond), strings.Count(logs, "\n"))
}
