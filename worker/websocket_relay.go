package worker

import (
	"errors"
)

// A relay is a Socket whose script end is another transport: the node
// that received a client's handshake for a Durable Object owned by a peer
// tunnels the socket to the owner, and the relay copies messages both
// ways, in order. The owner's Close is forwarded as it is and never
// followed by one of the relay's own (a second Close breaks browsers,
// upstream bug #203). If the tunnel fails between frames before a Close
// crossed, the client gets 1012 (service restart: reconnect); if it fails
// inside a frame, the client's transport is closed without a Close.

// relayQueue bounds the owner's messages waiting for a slow client: the
// tunnel is not read further until the client catches up.
const relayQueue = 64

// RelayCloseReason is the reason of the 1012 a relay sends when the
// owner's connection fails between frames.
const RelayCloseReason = "owner unavailable"

// NewRelay makes the Socket of a tunnelled WebSocket: attach the client's
// transport to it as to any other.
func NewRelay(tunnel Transport) *Socket {
	s := newSocket(nil)
	s.sink = func(ev wsEvent) { // client -> owner, on the client's reading goroutine
		var err error
		switch ev.kind {
		case 'm':
			err = tunnel.WriteMessage(ev.text, ev.data)
		case 'c':
			err = tunnel.WriteClose(ev.code, ev.reason)
		default:
			tunnel.Close()
		}
		if err != nil {
			tunnel.Close()
		}
	}
	go func() { // owner -> client
		for {
			text, data, err := tunnel.ReadMessage()
			if err == nil {
				s.sendWait(wsFrame{text: text, data: data, nogate: true})
				continue
			}
			var cf *CloseFrame
			switch {
			case errors.As(err, &cf):
				// The client's answer still goes to the owner; the tunnel
				// closes when the client's side ends.
				s.sendWait(wsFrame{close: true, code: cf.Code, reason: cf.Reason, nogate: true})
			case errors.Is(err, ErrMidFrame):
				tunnel.Close()
				s.drop()
			default:
				tunnel.Close()
				s.sendWait(wsFrame{close: true, code: 1012, reason: RelayCloseReason, nogate: true})
			}
			return
		}
	}()
	s.OnEnd(func() { tunnel.Close() })
	return s
}

// sendWait queues a frame, first waiting while relayQueue frames wait.
func (s *Socket) sendWait(f wsFrame) {
	s.mu.Lock()
	for len(s.out) >= relayQueue && !s.ended {
		if s.space == nil {
			s.space = make(chan struct{})
		}
		ch := s.space
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	s.mu.Unlock()
	s.send(f, !f.nogate)
}
