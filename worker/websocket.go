package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// WebSockets. A Socket is one WebSocket connection as Go holds it: the
// script's end (the server end of a WebSocketPair a Worker or Durable
// Object accepted, or an outbound client socket) on one side, and a
// Transport (the client's HTTP connection, a dialed connection, a tunnel
// to the owning peer) on the other. The script's end is a sink: the
// isolate's loop for a socket accepted with ws.accept(), the Durable
// Object for one accepted with ctx.acceptWebSocket (which outlives the
// isolate: hibernation drops the JavaScript and keeps the Socket).
//
// Frames the script sends before the transport is attached (the 101
// response is still on its way) are queued and written once it is. Every
// frame of a Durable Object passes its output gate first, so a frame never
// reveals a write before that write is durable.

// MaxMessageSize is workerd's limit on a received WebSocket message.
const MaxMessageSize = 32 << 20

// maxQueued bounds the bytes waiting to be written to one socket: a peer
// that stops reading loses its connection instead of growing the node's
// memory without bound.
const maxQueued = 32 << 20

// closeWait bounds how long a socket whose Close was sent waits for the
// far end's Close before dropping the transport.
const closeWait = 5 * time.Second

// Transport is the far side of a Socket. ReadMessage is called from one
// goroutine, the Write methods from one other goroutine; Close may be
// called from any and ends a ReadMessage in progress.
type Transport interface {
	// ReadMessage returns the next message; a Close frame is a *CloseFrame
	// error, any other error an abnormal end.
	ReadMessage() (text bool, data []byte, err error)
	WriteMessage(text bool, data []byte) error
	WriteClose(code int, reason string) error
	Close() error
}

// CloseFrame is a Close frame the far end sent (Code 1005 when it carried
// no code).
type CloseFrame struct {
	Code   int
	Reason string
}

func (c *CloseFrame) Error() string { return "websocket closed by peer" }

// ErrMidFrame is what a Transport's ReadMessage wraps when the
// connection failed inside a frame (as opposed to between frames).
var ErrMidFrame = errors.New("websocket connection failed inside a frame")

// wsEvent is what reaches the script's end.
type wsEvent struct {
	kind   byte // 'm' message, 'c' close, 'e' error then close
	text   bool
	data   []byte
	code   int
	reason string
	clean  bool
}

type wsFrame struct {
	close  bool
	text   bool
	data   []byte
	code   int
	reason string
	nogate bool // the host's own frame (auto-response, shutdown): nothing to reveal
}

// Socket is one WebSocket connection (see above).
type Socket struct {
	mu        sync.Mutex
	t         Transport
	out       []wsFrame
	writing   bool
	sentClose bool // the script's Close is queued or written
	gotClose  bool // the far end's Close arrived
	ended     bool
	sink      func(wsEvent)
	gate      func(context.Context) error
	onEnd     []func()
	closeT    *time.Timer
	// autoReply, when set, answers a text message without the sink
	// (ctx.setWebSocketAutoResponse); it returns the reply and true.
	autoReply func(msg []byte) ([]byte, bool)

	attachment []byte           // serializeAttachment, in the wire format
	bind       func(goja.Value) // sets the script's end of a socket made before it (on the loop)
	rec        *wsRec           // set for a socket of a Durable Object
	space      chan struct{}    // closed when the queue shrinks (sendWait)
	aborted    bool             // drop the connection once attached
	queued     int              // bytes in out
	overflow   bool             // past maxQueued: the connection is being dropped
	expire     *time.Timer      // ends the socket if no transport is attached in time
	onAttach   func()           // called once the transport is attached
}

// openSockets counts the process's Sockets with a transport attached.
var openSockets atomic.Int64

// OpenSockets is the number of WebSockets of the process whose transport
// is attached and not yet finished.
func OpenSockets() int { return int(openSockets.Load()) }

// attachWithin bounds how long a socket waits for its transport: a 101
// that never reached a client (the client left, the Worker answered
// something else) must not keep its object awake and resident forever.
var attachWithin = 60 * time.Second

func newSocket(sink func(wsEvent)) *Socket {
	s := &Socket{sink: sink}
	s.expire = time.AfterFunc(attachWithin, func() {
		s.mu.Lock()
		orphan := s.t == nil
		s.mu.Unlock()
		if orphan {
			s.finish()
		}
	})
	return s
}

// OnEnd registers f to run once the socket is finished (both Closes
// crossed, or the transport failed or was dropped).
func (s *Socket) OnEnd(f func()) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		f()
		return
	}
	s.onEnd = append(s.onEnd, f)
	s.mu.Unlock()
}

// Attach connects the socket to its transport: queued frames are written,
// and received messages go to the script's end. Attach is called once.
func (s *Socket) Attach(t Transport) {
	openSockets.Add(1)
	s.expire.Stop()
	s.mu.Lock()
	s.t = t
	if s.ended || s.aborted || s.overflow { // the script's end went away before the response was served
		s.mu.Unlock()
		t.Close()
		s.finish()
		return
	}
	s.kick()
	s.mu.Unlock()
	if s.onAttach != nil {
		s.onAttach()
	}
	go s.read()
}

// Attached reports whether the transport is attached.
func (s *Socket) Attached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t != nil
}

func (s *Socket) read() {
	for {
		text, data, err := s.t.ReadMessage()
		if err != nil {
			var cf *CloseFrame
			if errors.As(err, &cf) {
				s.mu.Lock()
				s.gotClose = true
				done := s.sentClose && !s.writing && len(s.out) == 0
				s.mu.Unlock()
				s.deliver(wsEvent{kind: 'c', code: cf.Code, reason: cf.Reason, clean: true})
				if done {
					s.drop()
				}
				return
			}
			s.mu.Lock()
			already := s.ended || s.sentClose // our Close went: the far end just left
			s.mu.Unlock()
			if !already {
				s.deliver(wsEvent{kind: 'e', code: 1006, reason: "", clean: false})
			}
			s.drop()
			return
		}
		if !text || s.autoReply == nil {
			s.deliver(wsEvent{kind: 'm', text: text, data: data})
			continue
		}
		if reply, ok := s.autoReply(data); ok {
			s.send(wsFrame{text: true, data: reply}, false)
			continue
		}
		s.deliver(wsEvent{kind: 'm', text: text, data: data})
	}
}

func (s *Socket) deliver(ev wsEvent) {
	if s.sink != nil {
		s.sink(ev)
	}
}

// send queues a frame from the script's end. gated frames pass the
// output gate first.
func (s *Socket) send(f wsFrame, gated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sentClose || s.ended || s.overflow {
		return
	}
	if f.close {
		s.sentClose = true
	}
	f.nogate = !gated
	if s.queued+len(f.data) > maxQueued {
		s.overflow = true
		s.out, s.queued = nil, 0
		if s.t != nil {
			go s.drop()
		} // else Attach drops it
		return
	}
	s.queued += len(f.data)
	s.out = append(s.out, f)
	s.kick()
}

// kick starts the writer if there is a transport and something to write.
// Call with s.mu held.
func (s *Socket) kick() {
	if s.t == nil || s.writing || len(s.out) == 0 {
		return
	}
	s.writing = true
	go s.write()
}

func (s *Socket) write() {
	for {
		s.mu.Lock()
		if len(s.out) == 0 || s.ended {
			s.writing = false
			closing := s.sentClose && !s.ended
			both := closing && s.gotClose
			if closing && !both && s.closeT == nil {
				s.closeT = time.AfterFunc(closeWait, s.drop)
			}
			s.mu.Unlock()
			if both {
				s.drop()
			}
			return
		}
		f := s.out[0]
		s.out[0] = wsFrame{}
		s.out = s.out[1:]
		s.queued -= len(f.data)
		s.wakeSenders()
		t, gate := s.t, s.gate
		s.mu.Unlock()
		if !f.nogate && gate != nil {
			if err := gate(context.Background()); err != nil {
				// The write a frame could reveal is not durable: the
				// connection ends without it.
				s.drop()
				return
			}
		}
		var err error
		if f.close {
			err = t.WriteClose(f.code, f.reason)
		} else {
			err = t.WriteMessage(f.text, f.data)
		}
		if err != nil {
			s.drop()
			return
		}
	}
}

// drop ends the transport at once.
func (s *Socket) drop() {
	s.mu.Lock()
	t := s.t
	s.mu.Unlock()
	if t != nil {
		t.Close()
	}
	s.finish()
}

func (s *Socket) finish() {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	s.wakeSenders()
	attached := s.t != nil
	fs := s.onEnd
	s.onEnd = nil
	s.out = nil
	if s.closeT != nil {
		s.closeT.Stop()
	}
	s.mu.Unlock()
	if attached {
		openSockets.Add(-1)
	}
	for _, f := range fs {
		f()
	}
}

// Shutdown closes the socket from the host's side: a Close frame with
// code and reason (unless one was sent already), then the transport once
// the far end answers or closeWait passes. It returns when the socket is
// finished or ctx ends.
func (s *Socket) Shutdown(ctx context.Context, code int, reason string) {
	done := make(chan struct{})
	s.OnEnd(func() { close(done) })
	s.mu.Lock()
	attached := s.t != nil
	if !s.sentClose && !s.ended && attached {
		s.sentClose = true
		s.out = append(s.out, wsFrame{close: true, code: code, reason: reason, nogate: true})
		s.kick()
	}
	s.mu.Unlock()
	if !attached {
		s.finish()
	}
	select {
	case <-done:
	case <-ctx.Done():
		s.drop()
	}
}

// Ended reports whether the socket is finished.
func (s *Socket) Ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// wakeSenders lets sendWait callers look at the queue again. Call with
// s.mu held.
func (s *Socket) wakeSenders() {
	if s.space != nil {
		close(s.space)
		s.space = nil
	}
}
