package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/server/api"
	"github.com/gorilla/websocket"
)

// benchSockets is how many hibernated sockets BenchmarkHibernatedSockets
// holds on one cell.
const benchSockets = 10000

var wsBenchProject = map[string]string{
	"wrangler.jsonc": `{"name":"wsbench","main":"index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["Room"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
export class Room extends DurableObject {
  async fetch(req) {
    if (req.headers.get("Upgrade") !== "websocket") return Response.json({ sockets: this.ctx.getWebSockets().length });
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, ["all"]);
    server.serializeAttachment({ joined: Date.now() });
    return new Response(null, { status: 101, webSocket: client });
  }
  webSocketMessage(ws, msg) {
    if (msg.startsWith("echo:")) { ws.send(msg); return; }
    if (msg.startsWith("broadcast:")) { for (const p of this.ctx.getWebSockets("all")) p.send(msg.slice(10)); }
  }
}
export default { fetch: (req, env) => env.ROOM.getByName("bench").fetch(req) };`,
}

// BenchmarkHibernatedSockets holds benchSockets WebSockets on one Durable
// Object cell whose isolate has hibernated, and reports:
//
//   - heap-B/socket: the node's Go heap growth per socket (after GC), with
//     the goroutine stacks' share beside it (stack-B/socket) — the
//     clients run in a child process (this test binary again,
//     TestWSBenchClients), so their memory is not counted, and neither is
//     the kernel's for the connections;
//   - broadcast-ms: one message sent to every socket (the object wakes,
//     rebuilds a JavaScript object for each socket and sends) until the
//     last client has it;
//   - echo p50/p99 for one socket, on the owner and through a peer.
//
// It does its work once: run it with -benchtime=1x.
//
//	go test -run '^$' -bench HibernatedSockets -benchtime 1x ./server/
func BenchmarkHibernatedSockets(b *testing.B) {
	if b.N > 1 {
		b.Skip("measures once: use -benchtime=1x")
	}
	store, err := bucket.NewFile(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	deployProjectB(b, store, wsBenchProject)
	a := startBenchWSNode(b, store, "bench-a")
	if status, body := getText(a.public + "/"); status != 200 {
		b.Fatalf("activate: %d %s", status, body)
	}
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	child := exec.Command(os.Args[0], "-test.run", "^TestWSBenchClients$", "-test.v")
	child.Env = append(os.Environ(), "CELLD_WSBENCH_ADDR="+strings.TrimPrefix(a.public, "http://"), "CELLD_WSBENCH_N="+strconv.Itoa(benchSockets))
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer child.Process.Kill()
	lines := bufio.NewScanner(stdout)
	waitLine := func(prefix string) string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(l, prefix))
			}
		}
		b.Fatalf("child ended before %q", prefix)
		return ""
	}
	t0 := time.Now()
	waitLine("READY")
	connect := time.Since(t0)
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := nodeStateURL(b, a.internal)
		if st.Counters.Hibernating == 1 && st.Counters.WebSockets == benchSockets {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the cell did not hibernate holding %d sockets: %+v", benchSockets, st.Counters)
		}
		time.Sleep(100 * time.Millisecond)
	}
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / benchSockets
	stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / benchSockets
	b.ReportMetric(heap, "heap-B/socket")
	b.ReportMetric(stack, "stack-B/socket")
	b.ReportMetric(float64(g1-g0)/benchSockets, "goroutines/socket")

	// Broadcast from one more socket.
	c, _, err := websocket.DefaultDialer.Dial(wsURL(a.public, "/"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintln(stdin, "RECV")
	waitLine("ARMED")
	if f := os.Getenv("CELLD_WSBENCH_CPUPROF"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		pprof.StartCPUProfile(out)
		defer func() { pprof.StopCPUProfile(); out.Close() }()
	}
	cpu0 := cpuTime()
	sent := time.Now()
	c.WriteMessage(websocket.TextMessage, []byte("broadcast:hello"))
	done, _ := strconv.ParseInt(waitLine("GOT"), 10, 64)
	if os.Getenv("CELLD_WSBENCH_CPUPROF") != "" {
		pprof.StopCPUProfile()
	}
	broadcast := time.Unix(0, done).Sub(sent)
	bcpu := cpuTime() - cpu0
	b.ReportMetric(float64(broadcast.Microseconds())/1000, "broadcast-ms")
	b.ReportMetric(float64(bcpu.Microseconds())/1000, "broadcast-node-cpu-ms")
	if _, m, err := c.ReadMessage(); err != nil || string(m) != "hello" {
		b.Fatalf("own copy of the broadcast: %q %v", m, err)
	}
	local50, local99 := echoRTT(b, c, 1000)
	b.ReportMetric(local50, "echo-p50-us")
	b.ReportMetric(local99, "echo-p99-us")

	peerB := startBenchWSNode(b, store, "bench-b")
	cp, _, err := websocket.DefaultDialer.Dial(wsURL(peerB.public, "/"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cp.Close()
	peer50, peer99 := echoRTT(b, cp, 1000)
	b.ReportMetric(peer50, "peer-echo-p50-us")
	b.ReportMetric(peer99, "peer-echo-p99-us")
	fmt.Fprintf(os.Stderr, "%d hibernated sockets: connected in %v; %.0f B heap + %.0f B stack per socket (%.2f goroutines); broadcast %v (node CPU %v); echo p50 %.0f µs p99 %.0f µs; through a peer p50 %.0f µs p99 %.0f µs (%.1fx)\n",
		benchSockets, connect.Round(time.Millisecond), heap, stack, float64(g1-g0)/benchSockets, broadcast.Round(time.Millisecond), bcpu.Round(time.Millisecond),
		local50, local99, peer50, peer99, peer50/local50)
	fmt.Fprintln(stdin, "QUIT")
	child.Wait()
}

func echoRTT(b *testing.B, c *websocket.Conn, n int) (p50, p99 float64) {
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		msg := "echo:" + strconv.Itoa(i)
		t := time.Now()
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			b.Fatal(err)
		}
		_, got, err := c.ReadMessage()
		if err != nil || string(got) != msg {
			b.Fatalf("echo %d: %q %v", i, got, err)
		}
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[n/2].Microseconds()), float64(ds[n*99/100].Microseconds())
}

func deployProjectB(b *testing.B, store bucket.Store, files map[string]string) {
	dir := b.TempDir()
	for name, body := range files {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchDeploy(b, store, dir)
}

func startBenchWSNode(b *testing.B, store bucket.Store, name string) testNode {
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ pub, in string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	o := Options{
		Store: store, Node: name, Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
		Version: "bench", TTL: 5 * time.Second, StateDir: filepath.Join(b.TempDir(), "state"),
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnReady: func(pub, in string) { ready <- addrs{pub, in} }, Hibernate: time.Second,
	}
	go func() { done <- Run(ctx, o) }()
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			b.Errorf("node %s did not stop", name)
		}
	})
	select {
	case a := <-ready:
		return testNode{public: "http://" + a.pub, internal: "http://" + a.in}
	case err := <-done:
		b.Fatalf("node %s exited: %v", name, err)
	}
	return testNode{}
}

func nodeStateURL(b *testing.B, internal string) api.State {
	resp, err := http.Get(internal + "/state")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		b.Fatal(err)
	}
	return st
}

func getText(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestWSBenchClients is BenchmarkHibernatedSockets' client process: it
// opens CELLD_WSBENCH_N sockets to CELLD_WSBENCH_ADDR and holds them;
// on RECV it reads one message on each and prints when the last arrived.
func TestWSBenchClients(t *testing.T) {
	addr := os.Getenv("CELLD_WSBENCH_ADDR")
	if addr == "" {
		t.Skip("the client process of BenchmarkHibernatedSockets")
	}
	n, _ := strconv.Atoi(os.Getenv("CELLD_WSBENCH_N"))
	conns := make([]*bufio.Reader, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	var failed error
	var mu sync.Mutex
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			br, err := rawHandshake(addr, "/")
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
			conns[i] = br
		}()
	}
	wg.Wait()
	if failed != nil {
		t.Fatalf("connect: %v", failed)
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "RECV":
			var last int64
			var lmu sync.Mutex
			var rg sync.WaitGroup
			for _, br := range conns {
				rg.Add(1)
				go func() {
					defer rg.Done()
					var h [2]byte
					if _, err := io.ReadFull(br, h[:]); err != nil {
						return
					}
					io.CopyN(io.Discard, br, int64(h[1]&0x7f))
					now := time.Now().UnixNano()
					lmu.Lock()
					if now > last {
						last = now
					}
					lmu.Unlock()
				}()
			}
			fmt.Println("ARMED")
			rg.Wait()
			fmt.Println("GOT", last)
		case "QUIT":
			return
		}
	}
}

// rawHandshake opens a WebSocket without a library: the benchmark's
// clients hold nothing but the connection and its reader.
func rawHandshake(addr, path string) (*bufio.Reader, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		path, addr, base64.StdEncoding.EncodeToString(key))
	br := bufio.NewReaderSize(c, 64)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, fmt.Errorf("handshake: %s", resp.Status)
	}
	return br, nil
}
