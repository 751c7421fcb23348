package worker

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// cloudflare:sockets (prelude/63_sockets.js): connect() opens an outbound
// TCP connection, optionally TLS from the start ("on") or later
// (startTls() on a "starttls" socket). Each socket is a tcpSocket here;
// its reads and writes run off the loop, as Host.Async work. In a
// Durable Object the connection, and every write, first pass the output
// gate: nothing leaves before the object's writes are durable.

// connectFailed is workerd's text for a connection that could not be
// made.
const connectFailed = "proxy request failed, cannot connect to the specified address"

// dialTimeout bounds one connection attempt.
const dialTimeout = 30 * time.Second

// tcpSocket is one socket. conn and err are set once, before ready is
// closed; afterwards they are read-only.
type tcpSocket struct {
	ready chan struct{}
	conn  net.Conn
	err   error

	mu       sync.Mutex
	upgraded bool // startTls() took the connection; this socket can no longer use it
	closed   bool

	gc *connCloser // what the garbage collector closes if the script never does
}

// connCloser closes a dropped socket's connection; it does not point back
// at the socket, so the socket can be collected.
type connCloser struct {
	mu   sync.Mutex
	conn net.Conn
	done bool
}

func (c *connCloser) set(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn = conn
}

func (c *connCloser) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && !c.done {
		c.done = true
		c.conn.Close()
	}
}

func (s *tcpSocket) wait(ctx context.Context) (net.Conn, error) {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if s.err != nil {
		return nil, s.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upgraded {
		return nil, errors.New("this socket was upgraded with startTls(); use the socket it returned")
	}
	return s.conn, nil
}

// close closes the connection once it is made (or as soon as it is).
func (s *tcpSocket) close() {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return
	}
	go func() {
		<-s.ready
		if s.conn != nil {
			s.mu.Lock()
			up := s.upgraded
			s.mu.Unlock()
			if !up {
				s.conn.Close()
			}
		}
	}()
}

func (iso *isolate) gateSocket(ctx context.Context) error {
	gate, obj := iso.rt.cfg.OutputGate, iso.obj
	if gate == nil || obj == nil {
		return nil
	}
	if err := gate(ctx, obj.class, obj.id); err != nil {
		return errors.New("celld: socket output withheld: the object's writes could not be confirmed durable: " + err.Error())
	}
	return nil
}

func (iso *isolate) tlsConfig(host string) *tls.Config {
	var c *tls.Config
	if base := iso.rt.cfg.TLSClientConfig; base != nil {
		c = base.Clone()
	} else {
		c = &tls.Config{}
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	return c
}

// newSocket starts dial in the background and returns the socket; a
// socket the script drops unclosed is closed by the garbage collector.
func (iso *isolate) newSocket(dial func(ctx context.Context) (net.Conn, error)) *tcpSocket {
	s := &tcpSocket{ready: make(chan struct{}), gc: &connCloser{}}
	ctx, gc := iso.ctx, s.gc
	go func() {
		conn, err := dial(ctx)
		gc.set(conn)
		s.conn, s.err = conn, err
		close(s.ready)
	}()
	runtime.AddCleanup(s, (*connCloser).close, gc)
	return s
}

func registerSocketNatives(set func(string, nativeFunc)) {
	// sockConnect(host, port, tls) -> socket handle
	set("sockConnect", func(iso *isolate, call goja.FunctionCall) goja.Value {
		host, port, useTLS := call.Argument(0).String(), int(call.Argument(1).ToInteger()), call.Argument(2).ToBoolean()
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		var cfg *tls.Config
		if useTLS {
			cfg = iso.tlsConfig(host)
		}
		s := iso.newSocket(func(ctx context.Context) (net.Conn, error) {
			if err := iso.gateSocket(ctx); err != nil {
				return nil, err
			}
			d := net.Dialer{Timeout: dialTimeout}
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, errors.New(connectFailed)
			}
			if cfg != nil {
				tc := tls.Client(conn, cfg)
				hctx, cancel := context.WithTimeout(ctx, dialTimeout)
				defer cancel()
				if err := tc.HandshakeContext(hctx); err != nil {
					conn.Close()
					return nil, errors.New("TLS handshake failed: " + err.Error())
				}
				conn = tc
			}
			return conn, nil
		})
		return iso.vm.ToValue(s)
	})
	// sockStartTLS(socket, host) -> the new socket over TLS on the same
	// connection.
	set("sockStartTLS", func(iso *isolate, call goja.FunctionCall) goja.Value {
		old, _ := call.Argument(0).Export().(*tcpSocket)
		if old == nil {
			panic(iso.vm.NewTypeError("not a socket"))
		}
		host := call.Argument(1).String()
		cfg := iso.tlsConfig(host)
		old.mu.Lock()
		old.upgraded = true
		old.mu.Unlock()
		s := iso.newSocket(func(ctx context.Context) (net.Conn, error) {
			<-old.ready
			if old.err != nil {
				return nil, old.err
			}
			old.gc.set(nil) // the new socket owns the connection now
			tc := tls.Client(old.conn, cfg)
			hctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			if err := tc.HandshakeContext(hctx); err != nil {
				old.conn.Close()
				return nil, errors.New("TLS handshake failed: " + err.Error())
			}
			return tc, nil
		})
		return iso.vm.ToValue(s)
	})
	// sockOpened(socket) -> Promise<{remoteAddress, localAddress}>
	set("sockOpened", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*tcpSocket)
		host := &Host{iso: iso}
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			<-s.ready
			return func(vm *goja.Runtime) (goja.Value, error) {
				if s.err != nil {
					return nil, ErrorOf(vm, s.err)
				}
				out := vm.NewObject()
				_ = out.Set("remoteAddress", s.conn.RemoteAddr().String())
				_ = out.Set("localAddress", s.conn.LocalAddr().String())
				return out, nil
			}
		})
	})
	// sockRead(socket) -> Promise<ArrayBuffer | null (the end)>
	set("sockRead", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*tcpSocket)
		host := &Host{iso: iso}
		ctx := iso.ctx
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			conn, err := s.wait(ctx)
			var buf []byte
			var n int
			if err == nil {
				buf = make([]byte, 64<<10)
				n, err = conn.Read(buf)
				if n > 0 {
					err = nil
				}
			}
			return func(vm *goja.Runtime) (goja.Value, error) {
				if errors.Is(err, io.EOF) || (err != nil && s.isClosed()) {
					return goja.Null(), nil
				}
				if err != nil {
					return nil, ErrorOf(vm, err)
				}
				return vm.ToValue(vm.NewArrayBuffer(buf[:n])), nil
			}
		})
	})
	// sockWrite(socket, bytes) -> Promise<undefined>
	set("sockWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*tcpSocket)
		data := append([]byte(nil), iso.bytesArg(call.Argument(1))...)
		host := &Host{iso: iso}
		ctx := iso.ctx
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			conn, err := s.wait(ctx)
			if err == nil {
				err = iso.gateSocket(ctx)
			}
			if err == nil {
				_, err = conn.Write(data)
			}
			return func(vm *goja.Runtime) (goja.Value, error) {
				if err != nil {
					return nil, ErrorOf(vm, err)
				}
				return goja.Undefined(), nil
			}
		})
	})
	// sockCloseWrite(socket) -> Promise: the writable side ends (a FIN).
	set("sockCloseWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*tcpSocket)
		host := &Host{iso: iso}
		ctx := iso.ctx
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			conn, err := s.wait(ctx)
			if err == nil {
				if cw, ok := conn.(interface{ CloseWrite() error }); ok {
					err = cw.CloseWrite()
				}
			}
			return func(vm *goja.Runtime) (goja.Value, error) {
				if err != nil && !s.isClosed() {
					return nil, ErrorOf(vm, err)
				}
				return goja.Undefined(), nil
			}
		})
	})
	// sockClose(socket) -> Promise that settles once the dial did: rejected
	// with its failure, else resolved after the connection is closed.
	set("sockClose", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*tcpSocket)
		s.close()
		host := &Host{iso: iso}
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			<-s.ready
			return func(vm *goja.Runtime) (goja.Value, error) {
				if s.err != nil {
					return nil, ErrorOf(vm, s.err)
				}
				return goja.Undefined(), nil
			}
		})
	})
}

func (s *tcpSocket) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
