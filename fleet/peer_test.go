package fleet

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func signed(t *testing.T, s *Signer, body string) *http.Request {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://10.0.0.1:8081/peer/v1/call?class=C&id=1", bytes.NewReader([]byte(body)))
	s.Sign(req, []byte(body))
	return req
}

func TestPeer_SignVerify(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.UnixMilli(1_800_000_000_000)
	s := &Signer{Secret: secret, Node: "a", Now: func() time.Time { return now }}
	v := &Verifier{Secret: secret, Now: func() time.Time { return now }}

	req := signed(t, s, "args")
	if err := v.Verify(req, []byte("args")); err != nil {
		t.Fatalf("good request refused: %v", err)
	}
	tests := []struct {
		name string
		req  func() (*http.Request, []byte)
		want string
	}{
		{"replay", func() (*http.Request, []byte) { return req, []byte("args") }, "replayed nonce"},
		{"altered body", func() (*http.Request, []byte) { return signed(t, s, "args"), []byte("other") }, "body does not match"},
		{"altered path", func() (*http.Request, []byte) {
			r := signed(t, s, "x")
			r.URL.RawQuery = "class=C&id=2"
			return r, []byte("x")
		}, "bad signature"},
		{"other secret", func() (*http.Request, []byte) {
			o := &Signer{Secret: []byte("another secret of thirty-two b!!"), Node: "a", Now: s.Now}
			return signed(t, o, "x"), []byte("x")
		}, "bad signature"},
		{"old timestamp", func() (*http.Request, []byte) {
			o := &Signer{Secret: secret, Node: "a", Now: func() time.Time { return now.Add(-time.Minute) }}
			return signed(t, o, "x"), []byte("x")
		}, "timestamp"},
		{"wrong version", func() (*http.Request, []byte) {
			r := signed(t, s, "x")
			r.Header.Set(HeaderPeerVersion, "9")
			return r, []byte("x")
		}, "protocol version"},
		{"object name altered after signing", func() (*http.Request, []byte) {
			r, _ := http.NewRequest("POST", "http://10.0.0.1:8081/peer/v2/object/call?class=C&id=1", nil)
			r.Header.Set("Celld-Object-Name", "alice")
			s.Sign(r, nil)
			r.Header.Set("Celld-Object-Name", "mallory")
			return r, nil
		}, "bad signature"},
		{"hop count altered after signing", func() (*http.Request, []byte) {
			r, _ := http.NewRequest("POST", "http://10.0.0.1:8081/peer/v2/object/call?class=C&id=1", nil)
			r.Header.Set("Celld-Peer-Hops", "1")
			s.Sign(r, nil)
			r.Header.Set("Celld-Peer-Hops", "0")
			return r, nil
		}, "bad signature"},
		{"header added after signing", func() (*http.Request, []byte) {
			r := signed(t, s, "x")
			r.Header.Set("Celld-Object-Name", "mallory")
			return r, []byte("x")
		}, "bad signature"},
		{"second value added after signing", func() (*http.Request, []byte) {
			r, _ := http.NewRequest("POST", "http://10.0.0.1:8081/peer/v2/object/call", nil)
			r.Header.Set("Celld-Peer-Hops", "1")
			s.Sign(r, nil)
			r.Header.Add("Celld-Peer-Hops", "1")
			return r, nil
		}, "bad signature"},
		{"nonce not hex", func() (*http.Request, []byte) {
			r, _ := http.NewRequest("POST", "http://10.0.0.1:8081/peer/v2/x", nil)
			s.Sign(r, nil)
			r.Header.Set(HeaderPeerNonce, strings.Repeat("zz", 16))
			r.Header.Set(HeaderPeerSignature, peerMAC(secret, r)) // even correctly signed
			return r, nil
		}, "malformed nonce"},
		{"unsigned", func() (*http.Request, []byte) {
			r, _ := http.NewRequest("POST", "http://x/peer/v1/call", nil)
			r.Header.Set(HeaderPeerVersion, PeerProtocol)
			return r, nil
		}, "signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, body := tc.req()
			err := v.Verify(r, body)
			if !errors.Is(err, ErrPeerAuth) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.want)
			}
		})
	}
}

func TestPeer_NoncesExpire(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	s := &Signer{Secret: secret, Node: "a", Now: clock}
	v := &Verifier{Secret: secret, MaxSkew: time.Second, Now: clock}
	for i := 0; i < 1000; i++ {
		if err := v.Verify(signed(t, s, "x"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Millisecond)
	}
	if n := len(v.seen); n > 300 {
		t.Fatalf("%d nonces remembered, want the window (2s) only", n)
	}
}
