package fleet

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// FuzzVerify sends arbitrary peer headers and bodies to the verifier, as a
// hostile client on the internal listener could: it refuses or accepts,
// never panics, and never accepts a request it did not see signed.
func FuzzVerify(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.UnixMilli(1_800_000_000_000)
	s := &Signer{Secret: secret, Node: "a", Now: func() time.Time { return now }}
	req, _ := http.NewRequest("POST", "http://x/peer/v2/object/call?class=C&id=1", nil)
	s.Sign(req, []byte("body"))
	h := req.Header
	f.Add(h.Get(HeaderPeerVersion), h.Get(HeaderPeerNode), h.Get(HeaderPeerTime), h.Get(HeaderPeerNonce),
		h.Get(HeaderPeerBody), h.Get(HeaderPeerSignature), "alice", []byte("body"))
	f.Add("2", "", "", "", "", "", "", []byte{})
	f.Fuzz(func(t *testing.T, version, node, ts, nonce, bodyHash, sig, objName string, body []byte) {
		r, err := http.NewRequest("POST", "http://x/peer/v2/object/call?class=C&id=1", bytes.NewReader(body))
		if err != nil {
			return
		}
		for k, v := range map[string]string{
			HeaderPeerVersion: version, HeaderPeerNode: node, HeaderPeerTime: ts, HeaderPeerNonce: nonce,
			HeaderPeerBody: bodyHash, HeaderPeerSignature: sig, "Celld-Object-Name": objName,
		} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		v := &Verifier{Secret: secret, Now: func() time.Time { return now }}
		if err := v.Verify(r, body); err == nil && sig != peerMAC(secret, r) {
			t.Fatalf("accepted a request whose signature %q is not its MAC", sig)
		}
	})
}
