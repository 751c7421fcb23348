package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/worker"
	"github.com/gorilla/websocket"
)

// WebSockets across nodes. A handshake that reaches node B for a Durable
// Object owned by node A becomes a WebSocket from B to A's internal
// listener: a signed GET upgrade whose Celld-Peer-Request header carries
// the client's request (the signature covers it as a body), answered by
// A with the object's response head in Celld-Peer-Response — on a 101 the
// connection then carries the client's frames both ways, on any other
// status the object's answer (its body cut to 1 KiB). B relays frames
// between the client and the tunnel (worker.NewRelay).
const (
	peerWSPath         = "/peer/v1/object/websocket"
	headerPeerRequest  = "Celld-Peer-Request"
	headerPeerResponse = "Celld-Peer-Response"
)

// tunnelDialer dials the owner's internal listener; no compression on
// the tunnel (the client's own connection negotiates it).
var tunnelDialer = &websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 1024, WriteBufferSize: 1024}

// tunnelUpgrader answers a peer's tunnel.
var tunnelUpgrader = &websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 1024, CheckOrigin: func(*http.Request) bool { return true }}

// wantsWebSocket reports whether a request's headers ask for a WebSocket.
func wantsWebSocket(h http.Header) bool {
	return headerHas(h, "Upgrade", "websocket")
}

// fetchWebSocket sends a WebSocket handshake to the owner and returns the
// relayed socket (or the owner's refusal).
func (r remote) fetchWebSocket(ctx context.Context, req *worker.Request) (*worker.Response, error) {
	if !time.Now().Before(r.leaseExpires) {
		r.p.objects.forgetRemote(r.class + ":" + r.id)
		return nil, fmt.Errorf("%w: the lease of owner %s has expired", worker.ErrObjectClosed, r.node)
	}
	if hopsFrom(ctx) >= maxHops {
		return nil, fmt.Errorf("object %s:%s: forwarded %d times without reaching its owner", r.class, r.id, maxHops)
	}
	msg, err := json.Marshal(peerMessage{Method: req.Method, URL: req.URL, Header: req.Header})
	if err != nil {
		return nil, fmt.Errorf("encode peer websocket: %w", err)
	}
	q := url.Values{"class": {r.class}, "id": {r.id}}
	u := "http://" + r.advertise + peerWSPath + "?" + q.Encode()
	hr, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set(headerPeerRequest, base64.StdEncoding.EncodeToString(msg))
	if name, ok := worker.ObjectName(ctx); ok {
		hr.Header.Set(headerObjectName, name)
	}
	if o, ok := worker.CallOrderFrom(ctx); ok {
		hr.Header.Set(headerCallOrder, o.String())
	}
	hr.Header.Set(headerHops, strconv.Itoa(hopsFrom(ctx)+1))
	r.p.signer.Sign(hr, msg)
	conn, resp, err := tunnelDialer.DialContext(ctx, "ws://"+r.advertise+peerWSPath+"?"+q.Encode(), hr.Header)
	if err != nil && resp == nil {
		r.p.objects.forgetRemote(r.class + ":" + r.id)
		return nil, fmt.Errorf("%w: owner %s at %s: %v", worker.ErrObjectClosed, r.node, r.advertise, err)
	}
	var head peerMessage
	if h := resp.Header.Get(headerPeerResponse); h != "" {
		if jerr := json.Unmarshal([]byte(h), &head); jerr != nil {
			if conn != nil {
				conn.Close()
			}
			return nil, fmt.Errorf("decode peer websocket answer of %s: %w", r.node, jerr)
		}
	}
	if err != nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if head.Status == 0 {
			// Not the object's answer: the owner refused the tunnel.
			r.p.objects.forgetRemote(r.class + ":" + r.id)
			if resp.StatusCode == http.StatusMisdirectedRequest || resp.Header.Get(headerUndelivered) != "" {
				return nil, fmt.Errorf("%w: %s refused it: %s", worker.ErrObjectClosed, r.node, bytes.TrimSpace(body))
			}
			return nil, fmt.Errorf("peer %s answered %d: %s", r.node, resp.StatusCode, bytes.TrimSpace(body))
		}
		return &worker.Response{Status: head.Status, StatusText: head.StatusText, Header: head.Header, Body: body}, nil
	}
	return &worker.Response{Status: http.StatusSwitchingProtocols, StatusText: head.StatusText, Header: head.Header,
		WebSocket: worker.NewRelay(worker.NewTransport(conn))}, nil
}

// serveWS is the owner's side of a tunnel.
func (p *peer) serveWS(w http.ResponseWriter, r *http.Request) {
	if p.objects.drain.active.Load() {
		w.Header().Set("Connection", "close")
	}
	msg, err := base64.StdEncoding.DecodeString(r.Header.Get(headerPeerRequest))
	if err != nil {
		http.Error(w, "peer websocket: malformed "+headerPeerRequest, http.StatusBadRequest)
		return
	}
	if err := p.verifier.Verify(r, msg); err != nil {
		p.objects.log.Warn("peer request refused", "from", r.RemoteAddr, "node", r.Header.Get(fleet.HeaderPeerNode), "path", r.URL.Path, "reason", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if !p.objects.fleet.Serving() {
		http.Error(w, "node is not serving (lease lost)", http.StatusServiceUnavailable)
		return
	}
	var m peerMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		http.Error(w, "decode peer websocket: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := checkPeerFetch(m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, class, id, _, ok := peerObjectContext(w, r)
	if !ok {
		return
	}
	h, err := p.objects.local(ctx, class, id)
	var resp *worker.Response
	if err == nil {
		resp, err = h.Fetch(ctx, &worker.Request{Method: m.Method, URL: m.URL, Header: m.Header})
	}
	if err != nil {
		var else_ *fleet.ElsewhereError
		if errors.As(err, &else_) {
			writeJSON(w, http.StatusMisdirectedRequest, peerMoved{Node: else_.Node, Advertise: else_.Advertise})
			return
		}
		peerUnavailable(w, err)
		return
	}
	head, err := json.Marshal(peerMessage{Status: resp.Status, StatusText: resp.StatusText, Header: resp.Header})
	if err != nil {
		http.Error(w, "encode peer websocket answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if resp.WebSocket == nil {
		if resp.Stream != nil {
			resp.Stream.Close() // the tunnel carries at most the first KiB of a refusal
		}
		w.Header().Set(headerPeerResponse, string(head))
		status := resp.Status
		if status < 200 {
			status = http.StatusInternalServerError
		}
		w.WriteHeader(status)
		w.Write(resp.Body)
		return
	}
	conn, err := tunnelUpgrader.Upgrade(w, r, http.Header{headerPeerResponse: {string(head)}})
	if err != nil {
		resp.WebSocket.Shutdown(context.Background(), 1011, "")
		return
	}
	resp.WebSocket.Attach(worker.NewTransport(conn))
}
