package fleet

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Peer requests between nodes are signed with the fleet secret
// (fleet/peer-auth.json). A request carries the protocol version, the
// sending node, a timestamp (bounded skew), a nonce (32 hex digits, refused
// if seen again within the window), the SHA-256 of its body and an
// HMAC-SHA256 over the method, the path and query, and every Celld-*
// header but the signature itself — so a header that changes what the
// receiver does (the object name, the hop count, whatever a later route
// adds) cannot be altered or added after signing.
//
// Protocol 2 extended the MAC from the fixed peer headers to every Celld-*
// header; nodes of protocol 1 and 2 refuse each other's requests by
// version, with a message that says so.
const (
	PeerProtocol = "2"

	HeaderPeerVersion   = "Celld-Peer-Version"
	HeaderPeerNode      = "Celld-Peer-Node"
	HeaderPeerTime      = "Celld-Peer-Time"
	HeaderPeerNonce     = "Celld-Peer-Nonce"
	HeaderPeerBody      = "Celld-Peer-Body"
	HeaderPeerSignature = "Celld-Peer-Signature"
)

// DefaultPeerSkew bounds the clock difference a signed request may show.
const DefaultPeerSkew = 30 * time.Second

// ErrPeerAuth is wrapped by every verification failure.
var ErrPeerAuth = errors.New("peer request refused")

// Signer signs outgoing peer requests.
type Signer struct {
	Secret []byte
	Node   string
	Now    func() time.Time // default time.Now
}

// Sign sets the peer headers on req for body.
func (s *Signer) Sign(req *http.Request, body []byte) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	sum := sha256.Sum256(body)
	h := req.Header
	h.Set(HeaderPeerVersion, PeerProtocol)
	h.Set(HeaderPeerNode, s.Node)
	h.Set(HeaderPeerTime, strconv.FormatInt(now().UnixMilli(), 10))
	h.Set(HeaderPeerNonce, hex.EncodeToString(nonce[:]))
	h.Set(HeaderPeerBody, hex.EncodeToString(sum[:]))
	h.Set(HeaderPeerSignature, peerMAC(s.Secret, req))
}

// peerMAC is the HMAC of req's method, path and query, and its Celld-*
// headers but the signature, in canonical name order, each value of a
// header in order, every field length-prefixed so no two requests encode
// alike.
func peerMAC(secret []byte, req *http.Request) string {
	m := hmac.New(sha256.New, secret)
	field := func(s string) { fmt.Fprintf(m, "%d:%s\n", len(s), s) }
	field(req.Method)
	field(req.URL.RequestURI())
	names := make([]string, 0, 8)
	for name := range req.Header {
		if strings.HasPrefix(name, "Celld-") && name != HeaderPeerSignature {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		field(name)
		vals := req.Header[name]
		field(strconv.Itoa(len(vals)))
		for _, v := range vals {
			field(v)
		}
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Verifier checks incoming peer requests.
type Verifier struct {
	Secret  []byte
	MaxSkew time.Duration    // default DefaultPeerSkew
	Now     func() time.Time // default time.Now

	mu    sync.Mutex
	seen  map[string]int64 // nonce -> unix ms after which it may be forgotten
	order []nonceExpiry    // seen, oldest first, for pruning
}

type nonceExpiry struct {
	nonce   string
	expires int64
}

// Verify checks req (whose body is body) and remembers its nonce.
func (v *Verifier) Verify(req *http.Request, body []byte) error {
	if err := v.VerifyHeaders(req); err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	return CheckBodySum(req, sum[:])
}

// CheckBodySum checks sum, the SHA-256 of the body read, against the hash
// req's verified headers carry.
func CheckBodySum(req *http.Request, sum []byte) error {
	if req.Header.Get(HeaderPeerBody) != hex.EncodeToString(sum) {
		return fmt.Errorf("%w: body does not match its signed hash", ErrPeerAuth)
	}
	return nil
}

// VerifyHeaders checks everything about req but its body — version,
// signature, timestamp, nonce (remembered) and the form of the body hash
// — so a node reads the body only of a request a peer signed. The body is
// then checked with CheckBodySum as it is read.
func (v *Verifier) VerifyHeaders(req *http.Request) error {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	skew := v.MaxSkew
	if skew <= 0 {
		skew = DefaultPeerSkew
	}
	h := req.Header
	if got := h.Get(HeaderPeerVersion); got != PeerProtocol {
		return fmt.Errorf("%w: protocol version %q, this node speaks %q", ErrPeerAuth, got, PeerProtocol)
	}
	sig, err := hex.DecodeString(h.Get(HeaderPeerSignature))
	if err != nil || len(sig) != sha256.Size {
		return fmt.Errorf("%w: missing or malformed signature", ErrPeerAuth)
	}
	want, _ := hex.DecodeString(peerMAC(v.Secret, req))
	if !hmac.Equal(sig, want) {
		return fmt.Errorf("%w: bad signature (different fleet secret, or the request was altered)", ErrPeerAuth)
	}
	if b := h.Get(HeaderPeerBody); len(b) != 2*sha256.Size || strings.ToLower(b) != b || !isHex(b) {
		return fmt.Errorf("%w: malformed body hash (want 64 lowercase hex digits)", ErrPeerAuth)
	}
	ts, err := strconv.ParseInt(h.Get(HeaderPeerTime), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: malformed timestamp", ErrPeerAuth)
	}
	nowMS := now().UnixMilli()
	if d := nowMS - ts; d > skew.Milliseconds() || -d > skew.Milliseconds() {
		return fmt.Errorf("%w: timestamp %d ms away from this node's clock (at most %v allowed)", ErrPeerAuth, d, skew)
	}
	nonce := h.Get(HeaderPeerNonce)
	if _, err := hex.DecodeString(nonce); err != nil || len(nonce) != 32 || strings.ToLower(nonce) != nonce {
		return fmt.Errorf("%w: malformed nonce (want 32 lowercase hex digits)", ErrPeerAuth)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[string]int64{}
	}
	for len(v.order) > 0 && v.order[0].expires < nowMS {
		delete(v.seen, v.order[0].nonce)
		v.order = v.order[1:]
	}
	if _, dup := v.seen[nonce]; dup {
		return fmt.Errorf("%w: replayed nonce", ErrPeerAuth)
	}
	exp := ts + 2*skew.Milliseconds()
	v.seen[nonce] = exp
	v.order = append(v.order, nonceExpiry{nonce, exp})
	return nil
}

// PeerCellCallPath is the signed route that runs one request of a built-in
// cell (d1:, kv:, queue:) on its owner: POST ?cell=NAME with the encoded
// request as the body. 200 carries the answer; 422 a request failure
// ({"error": message}); 421 names the new owner; 503 is retryable.
const PeerCellCallPath = "/peer/v1/cell/call"

// PeerCellError is the body of a 422 from PeerCellCallPath.
type PeerCellError struct {
	Error string `json:"error"`
	// Code classifies the refusal when the handler named its class (D1's
	// "D1_ERROR"…); older nodes leave it out.
	Code string `json:"code,omitempty"`
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
