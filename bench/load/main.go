// Command load is a closed-loop HTTP load generator: -c workers each send
// a GET to -url, wait for the whole response, and send the next one, over
// keep-alive connections. Requests during -warmup are not counted; then it
// measures for -d and prints one JSON line:
//
//	{"reqs":N,"rps":R,"p50_us":P,"p99_us":Q,"errors":E}
//
// reqs and the percentiles cover successful (2xx) requests that started and
// finished inside the measured window; errors counts transport failures
// and non-2xx answers in that window. rps is reqs divided by -d.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

type result struct {
	Reqs   int     `json:"reqs"`
	RPS    float64 `json:"rps"`
	P50US  int64   `json:"p50_us"`
	P99US  int64   `json:"p99_us"`
	Errors int     `json:"errors"`
}

type worker struct {
	lat    []time.Duration
	errors int
	// firstErr is the first failure this worker saw, for the log.
	firstErr string
}

func main() {
	url := flag.String("url", "", "URL to GET (required)")
	conc := flag.Int("c", 32, "concurrent workers, each with its own keep-alive connection")
	dur := flag.Duration("d", 10*time.Second, "measured duration")
	warm := flag.Duration("warmup", 2*time.Second, "unmeasured warm-up before -d")
	timeout := flag.Duration("timeout", 10*time.Second, "per-request timeout")
	flag.Parse()
	if *url == "" || *conc < 1 || *dur <= 0 || *warm < 0 {
		fmt.Fprintln(os.Stderr, "load: need -url, -c >= 1, -d > 0, -warmup >= 0")
		flag.Usage()
		os.Exit(2)
	}
	res, firstErr, err := run(*url, *conc, *dur, *warm, *timeout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	if firstErr != "" {
		fmt.Fprintf(os.Stderr, "load: %d error(s); first: %s\n", res.Errors, firstErr)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
}

func run(url string, conc int, dur, warm, timeout time.Duration) (result, string, error) {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conc,
		MaxIdleConnsPerHost: conc,
		MaxConnsPerHost:     conc,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: timeout}
	req0, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return result{}, "", err
	}

	start := time.Now()
	measureFrom := start.Add(warm)
	measureTo := measureFrom.Add(dur)
	ctx, cancel := context.WithDeadline(context.Background(), measureTo.Add(timeout))
	defer cancel()

	ws := make([]worker, conc)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			w.lat = make([]time.Duration, 0, 1<<14)
			buf := make([]byte, 32<<10)
			for {
				t0 := time.Now()
				if !t0.Before(measureTo) {
					return
				}
				err := do(ctx, client, req0, buf)
				t1 := time.Now()
				if t0.Before(measureFrom) || t1.After(measureTo) {
					continue // warm-up, or finished after the window
				}
				if err != nil {
					w.errors++
					if w.firstErr == "" {
						w.firstErr = err.Error()
					}
					continue
				}
				w.lat = append(w.lat, t1.Sub(t0))
			}
		}(&ws[i])
	}
	wg.Wait()

	var all []time.Duration
	res := result{}
	firstErr := ""
	for i := range ws {
		all = append(all, ws[i].lat...)
		res.Errors += ws[i].errors
		if firstErr == "" {
			firstErr = ws[i].firstErr
		}
	}
	slices.Sort(all)
	res.Reqs = len(all)
	res.RPS = float64(len(all)) / dur.Seconds()
	res.P50US = pct(all, 0.50).Microseconds()
	res.P99US = pct(all, 0.99).Microseconds()
	return res, firstErr, nil
}

// do sends one GET and reads the whole body; a non-2xx status is an error.
func do(ctx context.Context, c *http.Client, req0 *http.Request, buf []byte) error {
	resp, err := c.Do(req0.WithContext(ctx))
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New(resp.Status)
	}
	return nil
}

// pct is the nearest-rank percentile of sorted durations (0 when empty).
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}
