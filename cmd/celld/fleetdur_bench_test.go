package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

var (
	benchMode = flag.String("fleet.benchmode", "", "BenchmarkFleetDurability: measure only this mode (bucket or fleet)")
	benchPerf = flag.String("fleet.perf", "", "BenchmarkFleetDurability: record a node's CPU profile with perf (perf record -g) for 10 s of the 64-counter window into this file")
	perfNode  = flag.String("fleet.perfnode", "a", "the node -fleet.perf records: a (the owner), b or c (its followers)")
)

// latencyProxy sits in front of MinIO and adds a fixed delay to every
// request, modelling a region-local object store; it counts PUTs by the
// first segment of their key, and DELETEs (under "DELETE").
type latencyProxy struct {
	delay time.Duration
	mu    sync.Mutex
	puts  map[string]int
	addr  string
	srv   *http.Server
}

func startLatencyProxy(t testing.TB, target string, delay time.Duration) *latencyProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &latencyProxy{delay: delay, puts: map[string]int{}, addr: "http://" + l.Addr().String()}
	rp := httputil.NewSingleHostReverseProxy(u) // keeps the signed Host header
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(p.delay)
		if r.Method == http.MethodDelete {
			p.mu.Lock()
			p.puts["DELETE"]++
			p.mu.Unlock()
		}
		if r.Method == http.MethodPut {
			// /<bucket>/<prefix>/...
			parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
			key := "?"
			if len(parts) > 1 {
				key = parts[1]
			}
			if key == "log" && strings.HasSuffix(r.URL.Path, ".pack") {
				key = "log-pack"
			}
			p.mu.Lock()
			p.puts[key]++
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})}
	go p.srv.Serve(l)
	t.Cleanup(func() { p.srv.Close() })
	return p
}

func (p *latencyProxy) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.puts {
		out[k] = v
	}
	return out
}

type modeResult struct {
	p50, p99                   time.Duration // one writer
	p50x, p99x                 time.Duration // 64 writers, a counter each
	acked64                    int
	dataPuts, allPuts, deletes int // data: cells/ and log/ (records and packs)
	// 64 writers on one counter (group commit, merged uploads)
	p50s, p99s          time.Duration
	ackedSame, putsSame int
	cpu                 time.Duration  // the three nodes' CPU time, whole run
	breakdown           map[string]int // 64 counters: requests by prefix
	// the three nodes' CPU time per acknowledged write: one writer, 64
	// writers on 64 counters, 64 on one counter (in each measured window)
	cpuOne, cpu64, cpuSame time.Duration
}

// procCPU is a process's CPU time so far (user + system), from
// /proc/<pid>/stat; 0 where that cannot be read.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// BenchmarkFleetDurability compares write acknowledgement latency and
// bucket PUTs per acknowledged write in fleet mode (three nodes: the owner
// and two followers) and bucket mode, with every bucket request 20 ms
// slower (a latency proxy in front of MinIO). Run it with
//
//	go test ./cmd/celld -run '^$' -bench FleetDurability -benchtime 1x
//
// (-fleet.benchmode=fleet measures fleet mode alone, for a quicker loop;
// the ratios then need a bucket run's figures.)
func BenchmarkFleetDurability(b *testing.B) {
	bin := buildCelld(b)
	srv := miniotest.Shared(b)
	res := map[string]modeResult{}
	modes := []string{"bucket", "fleet"}
	if *benchMode != "" {
		modes = []string{*benchMode}
	}
	for _, mode := range modes {
		res[mode] = runMode(b, bin, srv, mode)
	}
	f, k := res["fleet"], res["bucket"]
	if len(modes) == 1 {
		// A zero result stands in for the mode not run.
		k.acked64, k.ackedSame, k.p50, k.p50x, k.p50s = 1, 1, 1, 1, 1
		f.acked64, f.ackedSame = max(f.acked64, 1), max(f.ackedSame, 1)
	}
	for _, mode := range modes {
		r := res[mode]
		b.Logf("%-6s 1 writer: p50 %v p99 %v | 64 writers on 64 counters: p50 %v p99 %v, %d acked, %d data PUTs (cells/ + log/: %.4f per ack), %d PUTs in all (%.4f per ack), %d DELETEs (%.4f per ack)",
			mode, r.p50, r.p99, r.p50x, r.p99x, r.acked64, r.dataPuts, float64(r.dataPuts)/float64(r.acked64), r.allPuts, float64(r.allPuts)/float64(r.acked64),
			r.deletes, float64(r.deletes)/float64(r.acked64))
		b.Logf("%-6s 64 counters, bucket requests by kind: %v", mode, r.breakdown)
	}
	for _, mode := range modes {
		r := res[mode]
		b.Logf("%-6s 64 writers on one counter: p50 %v p99 %v, %d acked, %d data PUTs (%.4f per ack); node CPU for the whole run %v",
			mode, r.p50s, r.p99s, r.ackedSame, r.putsSame, float64(r.putsSame)/float64(r.ackedSame), r.cpu.Round(time.Millisecond))
	}
	for _, mode := range modes {
		r := res[mode]
		b.Logf("%-6s node CPU per acknowledged write (three nodes): 1 writer %v, 64 writers on 64 counters %v, 64 on one counter %v",
			mode, r.cpuOne.Round(time.Microsecond), r.cpu64.Round(time.Microsecond), r.cpuSame.Round(time.Microsecond))
	}
	b.Logf("fleet/bucket p50 ratio: 1 writer %.3f, 64 writers %.3f, 64 writers on one counter %.3f",
		float64(f.p50)/float64(k.p50), float64(f.p50x)/float64(k.p50x), float64(f.p50s)/float64(k.p50s))
	b.ReportMetric(float64(f.putsSame)/float64(f.ackedSame), "fleet-PUTs/ack-1cell")
	b.ReportMetric(float64(k.putsSame)/float64(k.ackedSame), "bucket-PUTs/ack-1cell")
	b.ReportMetric(float64(f.p50.Microseconds())/1000, "fleet-p50-ms")
	b.ReportMetric(float64(k.p50.Microseconds())/1000, "bucket-p50-ms")
	b.ReportMetric(float64(f.dataPuts)/float64(f.acked64), "fleet-PUTs/ack-64cells")
	b.ReportMetric(float64(k.dataPuts)/float64(k.acked64), "bucket-PUTs/ack-64cells")
	b.ReportMetric(float64(f.cpuOne.Microseconds()), "fleet-cpu-us/ack-1writer")
	b.ReportMetric(float64(f.cpu64.Microseconds()), "fleet-cpu-us/ack-64cells")
}

func runMode(b *testing.B, bin string, srv *miniotest.Server, mode string) modeResult {
	proxy := startLatencyProxy(b, srv.Endpoint, 20*time.Millisecond)
	bucketName := srv.NewBucket(b)
	via := &miniotest.Server{Endpoint: proxy.addr, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}
	deployCounter(b, bin, via, bucketName)
	env := []string{"CELLD_DURABILITY=" + mode, "CELLD_TTL_MS=10000", "CELLD_FLEET_UPLOAD_MS=200", "CELLD_FLEET_TRANSFER_MS=" + strconv.Itoa(int(benchTransfer/time.Millisecond))}
	procs := map[string]*serveProc{}
	for _, n := range []string{"a", "b", "c"} {
		procs[n] = startServe(b, bin, via, bucketName, n, filepath.Join(b.TempDir(), n), env...)
	}
	a := procs["a"]
	c := &fleetCluster{procs: procs}
	if mode == "fleet" {
		deadline := time.Now().Add(60 * time.Second)
		for {
			st, err := c.state("a")
			if err == nil && len(st.Durability.Followers) == 2 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("no group of two: %+v", st.Durability)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Keep-alive connections for all 64 writers (the default client keeps
	// two idle per host: the rest would dial anew for every write).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	write := func(name string) (time.Duration, bool) {
		start := time.Now()
		resp, err := client.Get(a.public + "/?name=" + name)
		if err != nil {
			return 0, false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start), resp.StatusCode == 200
	}
	nodesCPU := func() time.Duration {
		var d time.Duration
		for _, p := range procs {
			d += procCPU(p.cmd.Process.Pid)
		}
		return d
	}
	// Activate every counter first (cold activations are not measured).
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() { defer wg.Done(); write(fmt.Sprintf("w%d", i)) }()
	}
	wg.Wait()
	var r modeResult
	var one []time.Duration
	cpu0 := nodesCPU()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		if d, ok := write("w0"); ok {
			one = append(one, d)
		}
	}
	r.p50, r.p99 = percentiles(one)
	if len(one) > 0 {
		r.cpuOne = (nodesCPU() - cpu0) / time.Duration(len(one))
	}
	// Steady state: the writers run for a warm-up and then a measured
	// window, and what the bucket was asked during the window is set
	// against the writes acknowledged in it. With 64 counters in fleet mode
	// both last one CELLD_FLEET_TRANSFER_MS (its default), so the window
	// holds a cell's own upload per cell as well as the log packs, their
	// deletion and the floor writes.
	breakdown := map[string]int{}
	profile := mode == "fleet" // the first fleet window: 64 counters
	measure := func(warm, window time.Duration, name func(i int) string) (acks []time.Duration, puts, data, deletes int, cpu time.Duration) {
		clear(breakdown)
		var mu sync.Mutex
		var from, to time.Time
		start := time.Now()
		from, to = start.Add(warm), start.Add(warm+window)
		var before, after map[string]int
		var cpuFrom, cpuTo, ownerFrom, ownerTo time.Duration
		snap := make(chan struct{})
		go func() {
			time.Sleep(time.Until(from))
			before, cpuFrom, ownerFrom = proxy.snapshot(), nodesCPU(), procCPU(a.cmd.Process.Pid)
			if *benchPerf != "" && profile {
				profile = false
				out, err := exec.Command("perf", "record", "-F", "499", "-g", "-p", strconv.Itoa(procs[*perfNode].cmd.Process.Pid), "-o", *benchPerf, "--", "sleep", "10").CombinedOutput()
				b.Logf("perf record of node %s (%s mode) into %s: %v %s", *perfNode, mode, *benchPerf, err, tail(string(out), 300))
			}
			time.Sleep(time.Until(to))
			after, cpuTo, ownerTo = proxy.snapshot(), nodesCPU(), procCPU(a.cmd.Process.Pid)
			close(snap)
		}()
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(to) {
					sent := time.Now()
					d, ok := write(name(i))
					if ok && !sent.Before(from) && sent.Add(d).Before(to) {
						mu.Lock()
						acks = append(acks, d)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		<-snap
		for k, v := range after {
			d := v - before[k]
			switch k {
			case "DELETE":
				deletes += d
				continue
			case "cells", "log", "log-pack":
				data += d
			}
			if d > 0 {
				breakdown[k] += d
			}
			puts += d
		}
		if len(acks) > 0 {
			cpu = (cpuTo - cpuFrom) / time.Duration(len(acks))
			b.Logf("%s window of %d acks: node CPU per ack %v, of which the owner (a) %v",
				mode, len(acks), cpu.Round(time.Microsecond), ((ownerTo - ownerFrom) / time.Duration(len(acks))).Round(time.Microsecond))
		}
		return acks, puts, data, deletes, cpu
	}
	var many []time.Duration
	warm, window := time.Second, 5*time.Second
	if mode == "fleet" {
		warm, window = benchTransfer, benchTransfer
	}
	many, r.allPuts, r.dataPuts, r.deletes, r.cpu64 = measure(warm, window, func(i int) string { return fmt.Sprintf("w%d", i) })
	r.p50x, r.p99x = percentiles(many)
	r.acked64 = len(many)
	if r.acked64 == 0 {
		for n, p := range procs {
			b.Logf("%s: %s", n, tail(p.stderr.String(), 3000))
		}
		b.Fatalf("%s: no write acknowledged with 64 counters", mode)
	}
	r.breakdown = maps.Clone(breakdown)
	// 64 writers on one counter.
	// One cell: its own uploads come every CheckpointFrames pages of
	// batches, well within a few seconds under this load.
	same, _, putsSame, _, cpuSame := measure(2*time.Second, 10*time.Second, func(int) string { return "w0" })
	r.cpuSame = cpuSame
	r.p50s, r.p99s = percentiles(same)
	r.ackedSame, r.putsSame = len(same), putsSame
	if mode == "fleet" {
		if st, err := c.state("a"); err == nil {
			b.Logf("fleet node a: %d segments proven on followers, %d by the bucket, %d append requests hedged, group %+v",
				st.Durability.FleetAcked, st.Durability.BucketProofs, st.Durability.AppendsHedged, st.Durability.Followers)
		}
	}
	// The group's troubles during the run, by message.
	for n, p := range procs {
		out := p.stderr.String()
		var seen []string
		for _, msg := range []string{"fleet append refused or failed", "fleet follower slow", "fleet followers dropped", "fleet follower joined", "write log pack failed"} {
			if k := strings.Count(out, msg); k > 0 {
				seen = append(seen, fmt.Sprintf("%q ×%d", msg, k))
			}
		}
		if len(seen) > 0 {
			b.Logf("%s node %s logged: %s", mode, n, strings.Join(seen, ", "))
		}
		if i := strings.Index(out, "fleet append refused or failed"); i >= 0 {
			line := out[i:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			b.Logf("%s node %s, first append failure: %s", mode, n, line)
		}
	}
	for _, p := range procs {
		p.cmd.Process.Kill()
		p.wait()
		if ps := p.cmd.ProcessState; ps != nil {
			r.cpu += ps.UserTime() + ps.SystemTime()
		}
	}
	return r
}

// benchTransfer is CELLD_FLEET_TRANSFER_MS in the benchmark (its default).
const benchTransfer = 30 * time.Second

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(d)
	if len(d) == 0 {
		return 0, 0
	}
	return d[len(d)/2], d[len(d)*99/100]
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
