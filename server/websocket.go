package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/worker"
)

// WebSockets on the public listener: a Worker (or a Durable Object behind
// it) answers a handshake with a 101 response carrying a socket; the node
// upgrades the connection and attaches it to that socket. The node counts
// its open sockets and refuses a handshake beyond CELLD_MAX_WEBSOCKETS
// with a 503 that says so.

// wsCount counts this node's upgraded client connections.
type wsCount struct {
	max  int // 0: no limit
	open atomic.Int64

	mu    sync.Mutex
	socks map[*worker.Socket]struct{} // attached client sockets
}

// track records an attached client socket until it ends.
func (c *wsCount) track(s *worker.Socket) {
	c.mu.Lock()
	if c.socks == nil {
		c.socks = map[*worker.Socket]struct{}{}
	}
	c.socks[s] = struct{}{}
	c.mu.Unlock()
	s.OnEnd(func() {
		c.mu.Lock()
		delete(c.socks, s)
		c.mu.Unlock()
	})
}

// shutdownAll closes the client sockets still open at the end of a drain
// (tunnels to sockets owned elsewhere, a Worker's own) with 1012, and
// waits for them until the deadline. A tunnel whose owner's Close has
// crossed sends nothing more.
func (c *wsCount) shutdownAll(deadline time.Time) {
	c.mu.Lock()
	socks := make([]*worker.Socket, 0, len(c.socks))
	for s := range c.socks {
		socks = append(socks, s)
	}
	c.mu.Unlock()
	if len(socks) == 0 {
		return
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range socks {
		wg.Go(func() { s.Shutdown(ctx, 1012, "celld: this node is shutting down; reconnect") })
	}
	wg.Wait()
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") && headerHas(r.Header, "Connection", "upgrade")
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// serveWebSocket completes a handshake the script accepted (resp.Status
// 101 with a socket).
func (s *node) serveWebSocket(w http.ResponseWriter, r *http.Request, resp *worker.Response) {
	sock := resp.WebSocket
	if !isUpgrade(r) {
		// The script returned a socket to a request that did not ask for
		// one: nothing to attach it to.
		sock.Shutdown(r.Context(), 1011, "")
		http.Error(w, "celld: the Worker answered with a WebSocket, but the request did not ask for one (Upgrade: websocket)", http.StatusBadRequest)
		return
	}
	c := &s.objects.ws
	if n := c.open.Add(1); c.max > 0 && n > int64(c.max) {
		c.open.Add(-1)
		sock.Shutdown(r.Context(), 1013, "")
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("celld: this node holds %d open WebSockets (CELLD_MAX_WEBSOCKETS=%d); retry on another node", n-1, c.max),
			http.StatusServiceUnavailable)
		return
	}
	h := http.Header{}
	for k, vs := range resp.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Upgrade", "Connection", "Sec-Websocket-Accept", "Sec-Websocket-Extensions", "Content-Length", "Transfer-Encoding":
			continue // the handshake's own
		}
		h[k] = vs
	}
	// A protocol the script chose is answered only if the client offered
	// it (the library checks Sec-WebSocket-Protocol against the offer).
	up := *worker.Upgrader
	if p := resp.Header.Get("Sec-WebSocket-Protocol"); p != "" {
		up.Subprotocols = []string{p}
		h.Del("Sec-WebSocket-Protocol")
	}
	conn, err := up.Upgrade(w, r, h)
	if err != nil {
		c.open.Add(-1)
		sock.Shutdown(r.Context(), 1002, "")
		s.log.Info("websocket handshake failed", "url", r.URL.String(), "err", err)
		return
	}
	sock.OnEnd(func() { c.open.Add(-1) })
	c.track(sock)
	sock.Attach(worker.NewTransport(conn))
}

// OpenWebSockets is the number of client WebSockets the node holds open.
func (c *wsCount) Open() int { return int(c.open.Load()) }

// sockets is how many WebSockets a resident's object holds (0 for a
// built-in cell); a cell holding any is never evicted as idle.
func (r *resident) sockets() int {
	if r.obj == nil {
		return 0
	}
	return r.obj.Sockets()
}
