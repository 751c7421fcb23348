package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/worker"
)

// Peer routes on the internal listener. A node forwards a stub call for a
// cell owned by a live peer to that peer's advertised address; the call is
// signed with the fleet secret.
const (
	// v2: the answer is a JSON head line, then the body raw (streamed).
	peerFetchPath = "/peer/v2/object/fetch"
	peerCallPath  = "/peer/v1/object/call"

	headerObjectName = "Celld-Object-Name"
	headerHops       = "Celld-Peer-Hops"
	// headerCallOrder places a forwarded event in its stub's sequence
	// (worker.CallOrder), so the owner delivers a stub's concurrent
	// events in call order.
	headerCallOrder = "Celld-Call-Order"
	// headerRequestID carries the id of the public request a forwarded
	// call belongs to, for the owner's log lines (worker.WithRequestID).
	headerRequestID = "Celld-Request-Id"
	maxHops         = 2
)

// peerMessage is a worker.Request on the wire, or the head of a
// worker.Response (its body follows the head line raw).
type peerMessage struct {
	Method     string      `json:"method,omitempty"`
	URL        string      `json:"url,omitempty"`
	Status     int         `json:"status,omitempty"`
	StatusText string      `json:"status_text,omitempty"`
	Header     http.Header `json:"header"`
	Body       []byte      `json:"body,omitempty"`
	HasBody    bool        `json:"has_body,omitempty"`
	Streamed   bool        `json:"streamed,omitempty"` // the body is a stream: pass it on as it comes
}

// peerMoved answers a peer that addressed the wrong node.
type peerMoved struct {
	Node      string `json:"node"`
	Advertise string `json:"advertise"`
}

// peer is the node's side of peer calls.
type peer struct {
	signer   *fleet.Signer
	verifier *fleet.Verifier
	client   *http.Client
	streams  *http.Client // for fetches, whose answer body may stream for long
	objects  *objects

	bodies  *bodyBudget // every request body in flight on this node, both listeners
	maxBody int64       // per-request body cap (CELLD_MAX_BODY_MB)
}

func newPeer(secret []byte, node string, objs *objects) *peer {
	return &peer{
		signer:   &fleet.Signer{Secret: secret, Node: node},
		verifier: &fleet.Verifier{Secret: secret},
		client:   &http.Client{Timeout: 60 * time.Second},
		streams:  &http.Client{Transport: streamTransport()},
		objects:  objs,
		bodies:   newBodyBudget(DefaultBodyMemory),
		maxBody:  DefaultMaxRequestBody,
	}
}

func (p *peer) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+peerFetchPath, p.serve(p.serveFetch))
	mux.HandleFunc("POST "+peerCallPath, p.serve(p.serveCall))
	mux.HandleFunc("POST "+fleet.PeerCellCallPath, p.serveCellCall)
	mux.HandleFunc("GET "+peerWSPath, p.serveWS)
}

// verified verifies a peer request's signed headers, then reads its body
// (checking the signed hash as it reads); on failure it has answered. An
// unsigned or badly signed request is refused before a byte of its body
// is read. The body's budget is given back when the request's context
// ends.
func (p *peer) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if p.objects.drain.active.Load() {
		// Peers stop reusing connections to a draining node, one answer at
		// a time. (Turning keep-alives off server-wide would close idle
		// connections at once, under a peer about to write on one.)
		w.Header().Set("Connection", "close")
	}
	if err := p.verifier.VerifyHeaders(r); err != nil {
		// The reason names what was wrong, never the secret or the MAC.
		p.refused(w, r, err)
		return nil, false
	}
	body, lb, err := readPeerBody(w, r, p.bodies, p.maxBody)
	if errors.Is(err, fleet.ErrPeerAuth) {
		p.refused(w, r, err)
		return nil, false
	}
	if err != nil {
		bodyRefused(w, err)
		return nil, false
	}
	context.AfterFunc(r.Context(), lb.release)
	if !p.objects.fleet.Serving() {
		// A node that lost its lease (or woke from a freeze past it)
		// serves nothing, forwarded calls included.
		http.Error(w, "node is not serving (lease lost)", http.StatusServiceUnavailable)
		return nil, false
	}
	return body, true
}

func (p *peer) refused(w http.ResponseWriter, r *http.Request, err error) {
	p.objects.log.Warn("peer request refused", "from", r.RemoteAddr, "node", r.Header.Get(fleet.HeaderPeerNode), "path", r.URL.Path, "reason", err)
	w.Header().Set("Connection", "close") // its body is not read
	http.Error(w, err.Error(), http.StatusUnauthorized)
}

type peerHandler func(ctx context.Context, w http.ResponseWriter, class, id string, q url.Values, body []byte) error

// serve verifies a peer request and resolves its object locally (never
// forwarding again past maxHops).
// peerObjectContext reads what a verified peer request says about the
// object it is for — class and id, the object's name, the hop count and
// the call order — into the context its event runs under. A request that
// names no valid object or a malformed order is answered 400 (ok false).
func peerObjectContext(w http.ResponseWriter, r *http.Request) (ctx context.Context, class, id string, q url.Values, ok bool) {
	q = r.URL.Query()
	class, id = q.Get("class"), q.Get("id")
	if class == "" || !worker.ValidObjectID(class, id) {
		http.Error(w, "peer request names no valid object", http.StatusBadRequest)
		return nil, "", "", nil, false
	}
	hops, _ := strconv.Atoi(r.Header.Get(headerHops))
	ctx = r.Context()
	if name := r.Header.Get(headerObjectName); name != "" {
		ctx = worker.WithObjectName(ctx, name)
	}
	if v := r.Header.Get(headerCallOrder); v != "" {
		o, err := worker.ParseCallOrder(v)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return nil, "", "", nil, false
		}
		ctx = worker.WithCallOrder(ctx, o)
	}
	if v := r.Header.Get(headerRequestID); validRequestID(v) {
		ctx = worker.WithRequestID(ctx, v)
	}
	return withFromPeer(withHops(ctx, hops)), class, id, q, true
}

func (p *peer) serve(h peerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := p.verified(w, r)
		if !ok {
			return
		}
		ctx, class, id, q, ok := peerObjectContext(w, r)
		if !ok {
			return
		}
		if err := h(ctx, w, class, id, q, body); err != nil {
			var else_ *fleet.ElsewhereError
			if errors.As(err, &else_) {
				writeJSON(w, http.StatusMisdirectedRequest, peerMoved{Node: else_.Node, Advertise: else_.Advertise})
				return
			}
			peerUnavailable(w, err)
		}
	}
}

// headerUndelivered on a 503 says the event never reached an object (it
// was closing, or this node is draining): the sender resolves the cell
// again and retries.
const headerUndelivered = "Celld-Undelivered"

func peerUnavailable(w http.ResponseWriter, err error) {
	if errors.Is(err, worker.ErrObjectClosed) {
		w.Header().Set(headerUndelivered, "1")
	}
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}

func (p *peer) serveFetch(ctx context.Context, w http.ResponseWriter, class, id string, _ url.Values, body []byte) error {
	var m peerMessage
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, "decode peer fetch: "+err.Error(), http.StatusBadRequest)
		return nil
	}
	if err := checkPeerFetch(m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil // decoded and checked before the cell wakes
	}
	h, err := p.objects.local(ctx, class, id)
	if err != nil {
		return err
	}
	req := &worker.Request{Method: m.Method, URL: m.URL, Header: m.Header}
	if m.HasBody {
		req.Body = m.Body
		if req.Body == nil {
			req.Body = []byte{}
		}
	}
	resp, err := h.Fetch(ctx, req)
	if err != nil {
		return err
	}
	head, err := json.Marshal(peerMessage{Status: resp.Status, StatusText: resp.StatusText, Header: resp.Header, Streamed: resp.Stream != nil})
	if err != nil {
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		return fmt.Errorf("encode peer fetch answer: %w", err)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	w.Write(append(head, '\n'))
	if resp.Stream == nil {
		w.Write(resp.Body)
		return nil
	}
	http.NewResponseController(w).Flush() // status and headers go ahead of the body
	streamBody(ctx, w, resp.Stream)
	return nil
}

func (p *peer) serveCall(ctx context.Context, w http.ResponseWriter, class, id string, q url.Values, body []byte) error {
	if err := checkPeerCall(q.Get("method"), body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil // decoded and checked before the cell wakes
	}
	h, err := p.objects.local(ctx, class, id)
	if err != nil {
		return err
	}
	res, err := h.Call(ctx, q.Get("method"), body)
	var ex *worker.Exception
	switch {
	case errors.As(err, &ex):
		writeJSON(w, http.StatusUnprocessableEntity, ex)
	case err != nil:
		return err
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(res)
	}
	return nil
}

type hopsKey struct{}

func withHops(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, hopsKey{}, n)
}
func hopsFrom(ctx context.Context) int { n, _ := ctx.Value(hopsKey{}).(int); return n }

// remote is a handle on an object owned by a live peer.
type remote struct {
	p               *peer
	node, advertise string
	class, id       string
	leaseExpires    time.Time // the owner's published lease expiry when resolved
}

func (r remote) post(ctx context.Context, path string, query url.Values, body []byte) (*http.Response, []byte, error) {
	resp, err := r.send(ctx, r.p.client, path, query, body)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read reply of %s: %w", r.node, err)
	}
	return resp, data, nil
}

// send signs and sends a peer request. It answers the refusals that mean
// "resolve the cell again" with an error, and returns any other reply
// with its body unread.
func (r remote) send(ctx context.Context, client *http.Client, path string, query url.Values, body []byte) (*http.Response, error) {
	if !r.p.objects.now().Before(r.leaseExpires) {
		// Never send to a node whose lease has lapsed: the caller re-reads
		// ownership (and takes the cell over) instead.
		r.p.objects.forgetRemote(r.class + ":" + r.id)
		return nil, fmt.Errorf("%w: the lease of owner %s has expired", worker.ErrObjectClosed, r.node)
	}
	if hopsFrom(ctx) >= maxHops {
		return nil, fmt.Errorf("object %s:%s: forwarded %d times without reaching its owner", r.class, r.id, maxHops)
	}
	query.Set("class", r.class)
	query.Set("id", r.id)
	u := "http://" + r.advertise + path + "?" + query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if name, ok := worker.ObjectName(ctx); ok {
		req.Header.Set(headerObjectName, name)
	}
	if o, ok := worker.CallOrderFrom(ctx); ok {
		req.Header.Set(headerCallOrder, o.String())
	}
	req.Header.Set(headerHops, strconv.Itoa(hopsFrom(ctx)+1))
	if id := worker.RequestID(ctx); id != "" {
		req.Header.Set(headerRequestID, id)
	}
	r.p.signer.Sign(req, body)
	resp, err := client.Do(req)
	var op *net.OpError
	if err != nil && (errors.As(err, &op) && op.Op == "dial" || closedIdle(err)) {
		// Nothing was sent (the owner exited, e.g. after a drain): resolve
		// the cell again.
		r.p.objects.forgetRemote(r.class + ":" + r.id)
		if op != nil && op.Op == "dial" {
			// Until its lease is renewed, its cells are in takeover.
			r.p.objects.down.mark(r.node, r.leaseExpires)
		}
		return nil, fmt.Errorf("%w: owner %s at %s: %v", worker.ErrObjectClosed, r.node, r.advertise, err)
	}
	if err != nil {
		r.p.objects.forgetRemote(r.class + ":" + r.id)
		if ctx.Err() == nil && r.p.objects.leaseGone(ctx, r.node, r.leaseExpires) {
			// The owner finished a drain (every cell released, then its
			// lease deleted) and closed its listener under this call:
			// nothing ran there; resolve the cell again.
			return nil, fmt.Errorf("%w: owner %s left after a drain: %v", worker.ErrObjectClosed, r.node, err)
		}
		// The call may have run there (it was sent): not retried here,
		// but the cell cannot be served right now, so a Worker that does
		// not catch it answers 503 with Retry-After, not 500.
		return nil, fmt.Errorf("owner %s of %s:%s at %s is unreachable from this node: %w: %w", r.node, r.class, r.id, r.advertise, worker.ErrUnavailable, err)
	}
	undelivered := resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get(headerUndelivered) != ""
	if !undelivered && resp.StatusCode != http.StatusMisdirectedRequest {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read reply of %s: %w", r.node, err)
	}
	r.p.objects.forgetRemote(r.class + ":" + r.id)
	if undelivered {
		return nil, fmt.Errorf("%w: %s refused it: %s", worker.ErrObjectClosed, r.node, bytes.TrimSpace(data))
	}
	var m peerMoved
	json.Unmarshal(data, &m)
	return nil, fmt.Errorf("%w: %s no longer owns %s:%s (owner now %s)", worker.ErrObjectClosed, r.node, r.class, r.id, m.Node)
}

func (r remote) Fetch(ctx context.Context, req *worker.Request) (*worker.Response, error) {
	if wantsWebSocket(req.Header) {
		return r.fetchWebSocket(ctx, req)
	}
	body, _ := json.Marshal(peerMessage{Method: req.Method, URL: req.URL, Header: req.Header, Body: req.Body, HasBody: req.Body != nil})
	resp, err := r.send(ctx, r.p.streams, peerFetchPath, url.Values{}, body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		return nil, fmt.Errorf("peer %s answered %d: %s", r.node, resp.StatusCode, bytes.TrimSpace(data))
	}
	out, err := readFetchAnswer(resp.Body)
	if err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("read reply of %s: %w", r.node, err)
	}
	return out, nil
}

func (r remote) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	resp, data, err := r.post(ctx, peerCallPath, url.Values{"method": {method}}, args)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, nil
	case http.StatusUnprocessableEntity:
		var ex worker.Exception
		if err := json.Unmarshal(data, &ex); err != nil {
			return nil, fmt.Errorf("decode exception from %s: %w", r.node, err)
		}
		return nil, &ex
	default:
		return nil, fmt.Errorf("peer %s answered %d: %s", r.node, resp.StatusCode, bytes.TrimSpace(data))
	}
}

// closedIdle reports Go's transport error for a request sent on a pooled
// connection the server had already closed as idle: the server never read
// it (a peer shutting down closes only idle connections), so the call can
// be resolved again. Any other broken connection leaves the outcome
// unknown and the call fails.
func closedIdle(err error) bool {
	return strings.Contains(err.Error(), "http: server closed idle connection")
}

// checkPeerFetch refuses a forwarded fetch the object could not be given:
// a method that is no HTTP token, a URL that is not absolute http(s).
func checkPeerFetch(m peerMessage) error {
	if m.Method != "" && !validMethod(m.Method) {
		return fmt.Errorf("peer fetch: method %q is not an HTTP method token", m.Method)
	}
	u, err := url.Parse(m.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("peer fetch: %q is not an absolute http(s) URL", m.URL)
	}
	return nil
}

// checkPeerCall refuses a forwarded RPC call with no method or arguments
// not in the wire format.
func checkPeerCall(method string, args []byte) error {
	if method == "" {
		return errors.New("peer call: no method")
	}
	return worker.CheckWire(args)
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return len(m) > 0
}
