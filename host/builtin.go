package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/celldgo/celld/cell"
)

// ErrBuiltinClosed: the built-in cell was stopped (or moved) under the
// call; resolve its owner again and retry.
var ErrBuiltinClosed = errors.New("built-in cell stopped")

// RequestError is a built-in cell's refusal of a request as it stands —
// its handler's error, on this machine or on the owning peer (a 422 from
// fleet.PeerCellCallPath) — reported to the client as it is. Code, when
// the handler's error carried one (see Coded), survives the trip between
// nodes so a caller can classify the refusal by type.
type RequestError struct {
	Message string
	Code    string
}

func (e *RequestError) Error() string { return e.Message }

// Coded is implemented by a handler error that names its class (such as
// D1's "D1_ERROR"); the code travels with a RequestError.
type Coded interface{ ErrorCode() string }

// requestError wraps a handler's error.
func requestError(err error) *RequestError {
	re := &RequestError{Message: err.Error()}
	var c Coded
	if errors.As(err, &c) {
		re.Code = c.ErrorCode()
	}
	return re
}

// Builtin runs a built-in kind's requests on an open cell: one at a time,
// each answer behind the output gate.
type Builtin struct {
	c      *Cell
	h      cell.Handler
	mu     sync.Mutex
	closed bool
	busy   atomic.Int32 // requests holding or waiting for mu
	after  func(db *cell.DB)
}

// After makes f run after each request's handler, on the cell's database
// and still one at a time (a queue cell reports its alarm with it). Set
// it before the first Call.
func (b *Builtin) After(f func(db *cell.DB)) { b.after = f }

// Serve starts running h's requests on c. Between requests, the pool's
// requests to park the database (cell.Pool) are served here.
func (c *Cell) Serve(h cell.Handler) *Builtin {
	b := &Builtin{c: c, h: h}
	c.db.OnParkRequest(b.park)
	return b
}

// park parks the database if no request runs; one that waits for the
// cell reopens it.
func (b *Builtin) park() {
	if !b.mu.TryLock() {
		return
	}
	defer b.mu.Unlock()
	if !b.closed {
		b.c.db.Park()
	}
}

// Call runs one request. A handler's error is a *RequestError; a call
// after Close wraps ErrBuiltinClosed; an output the gate refuses is the
// gate's error.
func (b *Builtin) Call(ctx context.Context, req []byte) ([]byte, error) {
	b.busy.Add(1)
	defer b.busy.Add(-1)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrBuiltinClosed, b.c.name)
	}
	if err := b.c.Context().Err(); err != nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: %s: %w", ErrBuiltinClosed, b.c.name, context.Cause(b.c.Context()))
	}
	out, herr := b.h(b.c.db, req)
	if b.after != nil {
		b.after(b.c.db)
	}
	b.mu.Unlock()
	if gerr := b.c.Gate(ctx); gerr != nil {
		return nil, gerr
	}
	if herr != nil {
		return nil, requestError(herr)
	}
	return out, nil
}

// Busy is the number of requests running or waiting.
func (b *Builtin) Busy() int { return int(b.busy.Load()) }

// Close waits for the request running, if any, and refuses later ones.
func (b *Builtin) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.c.db.OnParkRequest(nil)
}

// Cell is the cell b runs on.
func (b *Builtin) Cell() *Cell { return b.c }
