package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/kv"
	"github.com/celldgo/celld/worker"
)

// Built-in cells (d1:, kv:) are hosted like Durable Objects — acquired at
// epoch + 1, restored, replicated, behind the output gate, evicted when
// idle, released in a drain — but their logic is a Go cell.Handler run
// one request at a time, and they outlive deployments.

// DefaultBuiltins are the built-in cell kinds a node hosts unless told
// otherwise: D1 databases and KV namespaces.
func DefaultBuiltins() map[string]cell.Handler {
	return map[string]cell.Handler{"d1": d1.Handle, "kv": kv.Handle}
}

// dataBindings builds the env bindings of dep's D1 databases and KV
// namespaces; their calls go through this node (local or remote owner).
func (o *objects) dataBindings(dep *deploy.Deployment) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	for _, db := range dep.Manifest.D1Databases {
		out[db.Binding] = d1.Binding(o, d1.CellName(db.DatabaseID, db.DatabaseName))
	}
	for _, ns := range dep.Manifest.KVNamespaces {
		out[ns.Binding] = kv.Binding(o, ns.ID)
	}
	for name, b := range o.r2Bindings(dep) {
		out[name] = b
	}
	return out
}

// builtinCell serializes a built-in cell's requests.
type builtinCell struct {
	h      cell.Handler
	mu     sync.Mutex
	closed bool
	busy   atomic.Int32 // requests holding or waiting for mu
}

func (r *resident) objectDone() <-chan struct{} {
	if r.obj == nil {
		return nil // a built-in cell stops only when told to
	}
	return r.obj.Done()
}

func (r *resident) busy() int {
	if r.obj == nil {
		return int(r.bi.busy.Load())
	}
	return r.obj.Busy()
}

// closeObject stops the object; for a built-in cell it waits for the
// request running, if any, and refuses later ones.
func (r *resident) closeObject(ctx context.Context) error {
	if r.obj != nil {
		return r.obj.Close(ctx)
	}
	r.bi.mu.Lock()
	r.bi.closed = true
	r.bi.mu.Unlock()
	return nil
}

// validBuiltinID reports whether id can name a built-in cell: it becomes a
// file name and part of bucket keys.
func validBuiltinID(id string) bool {
	if id == "" || len(id) > 200 || id == "." || id == ".." {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// splitBuiltin checks that name is a built-in cell this node can host.
func (o *objects) splitBuiltin(name string) (kind, id string, err error) {
	kind, id, ok := strings.Cut(name, ":")
	if !ok || o.builtins[kind] == nil {
		return "", "", fmt.Errorf("%q is not a built-in cell this node hosts", name)
	}
	if !validBuiltinID(id) {
		return "", "", fmt.Errorf("built-in cell %q: the id must be 1-200 characters of A-Z a-z 0-9 . _ -", name)
	}
	return kind, id, nil
}

// Call runs req on the built-in cell name, here or on its live owner: the
// node's cell.Caller for the d1 and kv bindings.
func (o *objects) Call(ctx context.Context, name string, req []byte) ([]byte, error) {
	kind, id, err := o.splitBuiltin(name)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		h, err := o.Object(ctx, kind, id)
		if err != nil {
			return nil, err
		}
		var out []byte
		switch h := h.(type) {
		case handle:
			out, err = h.r.callBuiltin(ctx, req)
		case remote:
			out, err = h.callCell(ctx, name, req)
		default:
			return nil, fmt.Errorf("built-in cell %s: unexpected handle %T", name, h)
		}
		if errors.Is(err, worker.ErrObjectClosed) && attempt < 3 && ctx.Err() == nil {
			continue // stopped or moved under us: resolve it again
		}
		return out, err
	}
}

// requestError is a handler's refusal of a request, reported as it is.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (r *resident) callBuiltin(ctx context.Context, req []byte) ([]byte, error) {
	r.inflight.Add(1)
	bi := r.bi
	bi.busy.Add(1)
	defer func() {
		bi.busy.Add(-1)
		r.lastUsed.Store(nowNano())
		r.inflight.Add(-1)
	}()
	bi.mu.Lock()
	if bi.closed {
		bi.mu.Unlock()
		return nil, fmt.Errorf("%w: %s stopped", worker.ErrObjectClosed, r.cell)
	}
	out, herr := bi.h(r.db, req)
	bi.mu.Unlock()
	if gerr := r.gate(ctx); gerr != nil {
		return nil, gerr
	}
	if herr != nil {
		return nil, &requestError{msg: herr.Error()}
	}
	return out, nil
}

// callCell forwards a built-in cell request to its live owner.
func (r remote) callCell(ctx context.Context, name string, req []byte) ([]byte, error) {
	resp, data, err := r.post(ctx, fleet.PeerCellCallPath, url.Values{"cell": {name}}, req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, nil
	case http.StatusUnprocessableEntity:
		var pe fleet.PeerCellError
		if json.Unmarshal(data, &pe) != nil {
			pe.Error = strings.TrimSpace(string(data))
		}
		return nil, &requestError{msg: pe.Error}
	default:
		return nil, fmt.Errorf("peer %s answered %d: %s", r.node, resp.StatusCode, strings.TrimSpace(string(data)))
	}
}

// serveCellCall is the peer route for built-in cell requests: it runs on a
// cell resident here or activates it; it never forwards.
func (p *peer) serveCellCall(w http.ResponseWriter, r *http.Request) {
	body, ok := p.verified(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("cell")
	kind, id, err := p.objects.splitBuiltin(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := withFromPeer(r.Context())
	h, err := p.objects.local(ctx, kind, id)
	var out []byte
	if err == nil {
		out, err = h.(handle).r.callBuiltin(ctx, body)
	}
	var else_ *fleet.ElsewhereError
	var re *requestError
	switch {
	case err == nil:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	case errors.As(err, &re):
		writeJSON(w, http.StatusUnprocessableEntity, fleet.PeerCellError{Error: re.msg})
	case errors.As(err, &else_):
		writeJSON(w, http.StatusMisdirectedRequest, peerMoved{Node: else_.Node, Advertise: else_.Advertise})
	default:
		peerUnavailable(w, err)
	}
}
