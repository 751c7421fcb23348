package worker_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// testTLS makes a self-signed certificate for 127.0.0.1 and localhost:
// the server's config and a client config that trusts it.
func testTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}

// echoServer serves on 127.0.0.1: each connection is echoed, in TLS
// with tlsCfg, or, with starttls, plain until a "STARTTLS\n" line is
// answered "OK\n" and TLS from then on.
func echoServer(t *testing.T, tlsCfg *tls.Config, starttls bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if starttls {
					line, err := bufio.NewReader(c).ReadString('\n') // the client waits for OK: nothing is buffered past it
					if err != nil || line != "STARTTLS\n" {
						return
					}
					io.WriteString(c, "OK\n")
				}
				if tlsCfg != nil {
					tc := tls.Server(c, tlsCfg)
					if tc.Handshake() != nil {
						return
					}
					c = tc
				}
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						c.Write([]byte(strings.ToUpper(string(buf[:n]))))
					}
					if err != nil {
						if cw, ok := c.(interface{ CloseWrite() error }); ok {
							cw.CloseWrite()
						}
						return
					}
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

const socketScript = `
	const { connect } = require("cloudflare:sockets");
	async function readAll(readable) {
		const r = readable.getReader();
		let s = "";
		for (;;) {
			const { value, done } = await r.read();
			if (done) return s;
			s += new TextDecoder().decode(value);
		}
	}
	async function readSome(reader, n) {
		let s = "";
		while (s.length < n) {
			const { value, done } = await reader.read();
			if (done) break;
			s += new TextDecoder().decode(value);
		}
		return s;
	}
	module.exports.default = {
		async fetch(request) {
			const u = new URL(request.url);
			const addr = u.searchParams.get("addr");
			const mode = u.pathname.slice(1);
			if (mode === "starttls") {
				const s = connect(addr, { secureTransport: "starttls" });
				const w = s.writable.getWriter();
				await w.write(new TextEncoder().encode("STARTTLS\n"));
				const r = s.readable.getReader();
				const ok = await readSome(r, 3);
				r.releaseLock(); w.releaseLock();
				const t = s.startTls({ expectedServerHostname: "localhost" });
				const tw = t.writable.getWriter();
				await tw.write("secret words");
				await tw.close();
				const back = await readAll(t.readable);
				await t.closed;
				return Response.json({ ok, back, upgraded: s.upgraded, mode: t.secureTransport });
			}
			const s = connect(addr, { secureTransport: mode });
			const info = await s.opened;
			const w = s.writable.getWriter();
			await w.write(new TextEncoder().encode("hello, "));
			await w.write("sockets");
			await w.close();
			const back = await readAll(s.readable);
			await s.closed;
			return Response.json({ back, remote: info.remoteAddress === addr, hasLocal: typeof info.localAddress });
		},
	};`

func TestSockets_EchoPlainTLSAndStartTLS(t *testing.T) {
	serverTLS, clientTLS := testTLS(t)
	rt := newRuntime(t, socketScript, worker.Config{TLSClientConfig: clientTLS})
	for _, tc := range []struct {
		mode, addr, want string
	}{
		{"off", echoServer(t, nil, false), `{"back":"HELLO, SOCKETS","remote":true,"hasLocal":"string"}`},
		{"on", echoServer(t, serverTLS, false), `{"back":"HELLO, SOCKETS","remote":true,"hasLocal":"string"}`},
		{"starttls", echoServer(t, serverTLS, true), `{"ok":"OK\n","back":"SECRET WORDS","upgraded":true,"mode":"on"}`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			got := fetch(t, rt, "GET", "/"+tc.mode+"?addr="+tc.addr, nil)
			if got.Status != 200 || string(got.Body) != tc.want {
				t.Fatalf("%d %s\nwant %s", got.Status, got.Body, tc.want)
			}
		})
	}
}

func TestSockets_TLSToAnUntrustedServerFails(t *testing.T) {
	serverTLS, _ := testTLS(t)
	rt := newRuntime(t, `
		const { connect } = require("cloudflare:sockets");
		module.exports.default = { async fetch(request) {
			const s = connect(new URL(request.url).searchParams.get("addr"), { secureTransport: "on" });
			try { await s.opened; return new Response("opened"); } catch (e) { return new Response(e.message); }
		} };`, worker.Config{})
	got := fetch(t, rt, "GET", "/?addr="+echoServer(t, serverTLS, false), nil)
	if !strings.HasPrefix(string(got.Body), "TLS handshake failed: ") {
		t.Fatalf("body = %s, want a TLS handshake failure", got.Body)
	}
}

// In a Durable Object a socket waits for the output gate before it
// connects and before each write; a gate that fails withholds them.
func TestSockets_DurableObjectOutputGate(t *testing.T) {
	var gates atomic.Int64
	var refuse atomic.Bool
	host := newLocalObjects(t)
	script := `
		const { connect } = require("cloudflare:sockets");
		const { DurableObject } = require("cloudflare:workers");
		class Sock extends DurableObject {
			async talk(addr) {
				const s = connect(addr);
				try { await s.opened; } catch (e) { return "refused: " + e.message; }
				const w = s.writable.getWriter();
				await w.write("gated");
				await w.close();
				const r = s.readable.getReader();
				let out = "";
				for (;;) { const { value, done } = await r.read(); if (done) break; out += new TextDecoder().decode(value); }
				return out;
			}
		}
		module.exports.Sock = Sock;
		module.exports.default = { async fetch(request, env) {
			return new Response(await env.SOCK.getByName("s").talk(new URL(request.url).searchParams.get("addr")));
		} };`
	rt := newRuntime(t, script, worker.Config{DurableObjects: map[string]string{"SOCK": "Sock"}, Objects: host,
		OutputGate: func(ctx context.Context, class, id string) error {
			gates.Add(1)
			if class != "Sock" || id == "" {
				return errors.New("gate called for the wrong object")
			}
			if refuse.Load() {
				return errors.New("not durable")
			}
			return nil
		}})
	host.use(rt)
	addr := echoServer(t, nil, false)
	if got := fetch(t, rt, "GET", "/?addr="+addr, nil); string(got.Body) != "GATED" {
		t.Fatalf("body = %s, want GATED", got.Body)
	}
	if n := gates.Load(); n < 2 {
		t.Errorf("output gate passed %d times, want at least 2 (the connection and the write)", n)
	}
	refuse.Store(true)
	got := fetch(t, rt, "GET", "/?addr="+addr, nil)
	if !strings.HasPrefix(string(got.Body), "refused: celld: socket output withheld") {
		t.Fatalf("with the gate failing: %s", got.Body)
	}
}
