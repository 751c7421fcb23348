package cell

import "context"

// Built-in cells (d1:<db>, kv:<namespace>, queue:<name>) hold data that is
// not a Durable Object's: their logic is Go, run on the cell's owner.
//
// A Handler runs one encoded request against the cell's database and
// returns the encoded answer. The caller (the node hosting the cell, or a
// command holding it under a tool lease) runs handlers for one cell one at
// a time, and applies the output gate before the answer leaves: a handler
// that must be all-or-nothing uses db.Transaction itself.
//
// An error returned by a Handler is a *request* failure the caller reports
// to the client as it is (its message is user-facing). Encoding is the
// package's own (JSON); the caller only moves bytes.
type Handler func(db *DB, req []byte) ([]byte, error)

// Caller delivers an encoded request to the owner of a built-in cell and
// returns the handler's answer: the node routes it to the local or remote
// owner; a command reaches the owner over peer HTTP or acquires the cell
// under a tool lease.
type Caller interface {
	Call(ctx context.Context, cell string, req []byte) ([]byte, error)
}

// CallerFunc adapts a function to Caller.
type CallerFunc func(ctx context.Context, cell string, req []byte) ([]byte, error)

// Call calls f.
func (f CallerFunc) Call(ctx context.Context, cell string, req []byte) ([]byte, error) {
	return f(ctx, cell, req)
}
