package worker

import (
	"errors"
	"testing"
	"time"
)

// pipeTransport is a Transport whose far end the test drives.
type pipeTransport struct {
	in     chan []byte
	closed chan struct{}
	wrote  chan string
}

func newPipe() *pipeTransport {
	return &pipeTransport{in: make(chan []byte), closed: make(chan struct{}), wrote: make(chan string, 16)}
}

func (p *pipeTransport) ReadMessage() (bool, []byte, error) {
	select {
	case b := <-p.in:
		return true, b, nil
	case <-p.closed:
		return false, nil, errors.New("closed")
	}
}
func (p *pipeTransport) WriteMessage(text bool, data []byte) error {
	p.wrote <- string(data)
	return nil
}
func (p *pipeTransport) WriteClose(code int, reason string) error {
	p.wrote <- "close " + reason
	return nil
}
func (p *pipeTransport) Close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return nil
}

// A socket whose 101 never reached a client ends by itself; one that was
// attached in time does not, and writes what was queued before.
func TestSocket_OrphanEnds(t *testing.T) {
	defer func(d time.Duration) { attachWithin = d }(attachWithin)
	attachWithin = 50 * time.Millisecond
	orphan := newSocket(nil)
	ended := make(chan struct{})
	orphan.OnEnd(func() { close(ended) })
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("an unattached socket did not end")
	}

	s := newSocket(func(wsEvent) {})
	s.send(wsFrame{text: true, data: []byte("early")}, true)
	p := newPipe()
	s.Attach(p)
	if got := <-p.wrote; got != "early" {
		t.Fatalf("queued frame: %q", got)
	}
	time.Sleep(150 * time.Millisecond)
	if s.Ended() {
		t.Fatal("an attached socket ended when the attach deadline passed")
	}
	p.Close()
}
