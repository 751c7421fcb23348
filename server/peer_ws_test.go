package server

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/gorilla/websocket"
)

// rawWS is a minimal WebSocket client that sees every frame, so a test
// can count Close frames (a library stops at the first).
type rawWS struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, base, path string) *rawWS {
	t.Helper()
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(15 * time.Second))
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		path, addr, base64.StdEncoding.EncodeToString(key))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("handshake %s: %d %s", path, resp.StatusCode, b)
	}
	return &rawWS{c: c, br: br}
}

func (w *rawWS) write(op byte, payload []byte) error {
	hdr := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 65536:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr = append(hdr, 0, 0, 0, 0) // a zero mask leaves the payload as it is
	_, err := w.c.Write(append(hdr, payload...))
	return err
}

func (w *rawWS) text(s string) error { return w.write(1, []byte(s)) }

func (w *rawWS) close(code int, reason string) error {
	return w.write(8, append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...))
}

// frame reads one frame: its opcode and payload.
func (w *rawWS) frame() (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(w.br, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(w.br, p); err != nil {
		return 0, nil, fmt.Errorf("inside a frame: %w", err)
	}
	return h[0] & 0x0f, p, nil
}

func (w *rawWS) readText(t *testing.T) string {
	t.Helper()
	op, p, err := w.frame()
	if err != nil || op != 1 {
		t.Fatalf("read: op %d %q %v, want a text frame", op, p, err)
	}
	return string(p)
}

// closes reads to the end of the connection and returns the Close frames
// it saw (code and reason each) and how the connection ended. With answer
// it answers the first Close, as a browser does.
func (w *rawWS) closes(t *testing.T, answer bool) ([]string, error) {
	t.Helper()
	var out []string
	for {
		op, p, err := w.frame()
		if err != nil {
			return out, err
		}
		if op == 8 {
			code := 1005
			if len(p) >= 2 {
				code = int(binary.BigEndian.Uint16(p))
				p = p[2:]
			}
			out = append(out, fmt.Sprintf("%d %s", code, p))
			if len(out) == 1 && answer {
				w.close(code, "")
			}
		}
	}
}

// faultProxy stands between peers and a node's internal listener, so a
// test can cut the owner's connections between frames or inside one.
type faultProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	upstream string
	conns    []net.Conn
	cutAfter int // > 0: forward this many more owner bytes, then cut
}

func newFaultProxy(t *testing.T) *faultProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *faultProxy) serve(c net.Conn) {
	p.mu.Lock()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go io.Copy(up, c)
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if p.cutAfter > 0 {
				if n >= p.cutAfter {
					c.Write(buf[:p.cutAfter])
					p.cutAfter = 0
					p.mu.Unlock()
					p.cut()
					return
				}
				p.cutAfter -= n
			}
			p.mu.Unlock()
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

// cut drops every connection through the proxy at once.
func (p *faultProxy) cut() {
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// tunnelNodes starts owner A (advertised through a fault proxy) and
// ingress B on one bucket, and makes room NAME resident on A.
func tunnelNodes(t *testing.T, room string) (a, b testNode, proxy *faultProxy) {
	t.Helper()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsProject)
	proxy = newFaultProxy(t)
	a = startNodeWith(t, store, "owner-a", func(o *Options) { o.Advertise = proxy.ln.Addr().String() })
	proxy.mu.Lock()
	proxy.upstream = strings.TrimPrefix(a.internal, "http://")
	proxy.mu.Unlock()
	b = startNode(t, store, "ingress-b")
	if all, _, _ := roomCount(t, a, room); all != 0 {
		t.Fatalf("fresh room has %d sockets", all)
	}
	return a, b, proxy
}

// TestWebSocket_TunnelAcrossNodes: a socket opened through B to an object
// owned by A carries 20 messages each way in order, and a clean close
// crosses exactly once.
func TestWebSocket_TunnelAcrossNodes(t *testing.T) {
	a, b, _ := tunnelNodes(t, "t1")
	w := dialRaw(t, b.public, "/room/t1?who=x")
	if got := w.readText(t); got != "welcome x" {
		t.Fatalf("welcome: %q", got)
	}
	if cells := nodeState(t, b).Cells; len(cells) != 0 {
		t.Fatalf("ingress B activated cells: %+v", cells)
	}
	if st := nodeState(t, a); len(st.Cells) != 1 || st.Cells[0].WebSockets != 1 {
		t.Fatalf("owner A: %+v", st.Cells)
	}
	for i := 0; i < 20; i++ {
		if err := w.text(fmt.Sprintf("m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		if got, want := w.readText(t), fmt.Sprintf("x: m%d", i); got != want {
			t.Fatalf("message %d: %q, want %q", i, got, want)
		}
	}
	w.close(1000, "done")
	closes, end := w.closes(t, false)
	if len(closes) != 1 || closes[0] != "1000 closed done" || !errors.Is(end, io.EOF) {
		t.Fatalf("close frames %q, end %v; want exactly [\"1000 closed done\"] then EOF", closes, end)
	}
}

// TestWebSocket_TunnelOwnerFails: the owner's connection failing between
// frames gives the client one Close, 1012; failing inside a frame closes
// the client's connection without a Close.
func TestWebSocket_TunnelOwnerFails(t *testing.T) {
	_, b, proxy := tunnelNodes(t, "t2")
	w := dialRaw(t, b.public, "/room/t2?who=y")
	w.readText(t)
	proxy.cut()
	closes, _ := w.closes(t, true)
	if len(closes) != 1 || closes[0] != "1012 owner unavailable" {
		t.Fatalf("between frames: close frames %q, want exactly [\"1012 owner unavailable\"]", closes)
	}

	w = dialRaw(t, b.public, "/room/t2?who=z")
	w.readText(t)
	proxy.mu.Lock()
	proxy.cutAfter = 1000
	proxy.mu.Unlock()
	w.text("big")
	closes, end := w.closes(t, true)
	if len(closes) != 0 || end == nil {
		t.Fatalf("inside a frame: close frames %q, end %v; want the connection closed without a Close", closes, end)
	}
}

// TestWebSocket_DrainClosesWith1012: a drain closes the node's sockets
// with 1012 and waits for that before it ends.
func TestWebSocket_DrainClosesWith1012(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsProject)
	n := startDrainNode(t, store, "drain-ws", nil)
	c := dialWS(t, wsURL(n.public, "/room/d1?who=d"))
	readText(t, c)
	n.shutdown(t, "")
	code, _ := expectClose(t, c)
	if code != 1012 {
		t.Fatalf("close code %d, want 1012", code)
	}
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1012, ""))
	if err := n.wait(t, 20*time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
}

// TestWebSocket_NodeCap: past CELLD_MAX_WEBSOCKETS a handshake is refused
// with a 503 that says why.
func TestWebSocket_NodeCap(t *testing.T) {
	n := startWSNode(t, func(o *Options) { o.MaxWebSockets = 1 })
	dialWS(t, wsURL(n.public, "/echo"))
	_, resp, err := websocket.DefaultDialer.Dial(wsURL(n.public, "/echo"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second socket: %v %v, want a 503", err, resp)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "CELLD_MAX_WEBSOCKETS=1") {
		t.Fatalf("refusal: %q", b)
	}
}

// TestWebSocket_IngressDrainClosesTunnels: a drain of the node a tunnel
// enters by closes it with one Close, 1012, and the drain then ends.
func TestWebSocket_IngressDrainClosesTunnels(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsProject)
	a := startNode(t, store, "owner-a")
	if all, _, _ := roomCount(t, a, "t3"); all != 0 {
		t.Fatalf("fresh room has %d sockets", all)
	}
	b := startDrainNode(t, store, "ingress-b", nil)
	w := dialRaw(t, b.public, "/room/t3?who=q")
	if got := w.readText(t); got != "welcome q" {
		t.Fatalf("welcome: %q", got)
	}
	b.shutdown(t, "")
	closes, _ := w.closes(t, true)
	if len(closes) != 1 || !strings.HasPrefix(closes[0], "1012 ") {
		t.Fatalf("close frames %q, want exactly one 1012", closes)
	}
	if err := b.wait(t, 20*time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
}
