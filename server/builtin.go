package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/d1/d1js"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/kv"
	"github.com/celldgo/celld/kv/kvjs"
	"github.com/celldgo/celld/queue"
	"github.com/celldgo/celld/queue/queuejs"
	"github.com/celldgo/celld/worker"
)

// Built-in cells (d1:, kv:) are hosted like Durable Objects — acquired at
// epoch + 1, restored, replicated, behind the output gate, evicted when
// idle, released in a drain — but their logic is a Go handler run one
// request at a time (host.Builtin), and they outlive deployments.

// builtinKind is one built-in cell kind as a node provides it, in one
// registration: its cells (handler and id rule: host.Kind) and the env
// bindings by which a deployment reaches them.
type builtinKind struct {
	kind     host.Kind
	bindings func(m *deploy.Manifest, cells cell.Caller) map[string]worker.Binding
}

// builtinKinds are the kinds every node provides. A new kind (queue:,
// cron:, workflow:) is one entry here.
var builtinKinds = []builtinKind{
	{d1.Kind, d1js.Bindings},
	{kv.Kind, kvjs.Bindings},
	{cron.Kind, noBindings}, // no binding: its node syncs and runs it (cron.go)
	{queue.Kind, queuejs.Bindings},
}

func noBindings(*deploy.Manifest, cell.Caller) map[string]worker.Binding { return nil }

// DefaultBuiltins are the built-in cell kinds a node hosts unless told
// otherwise: D1 databases, KV namespaces, cron schedules and queues.
func DefaultBuiltins() []host.Kind {
	out := make([]host.Kind, len(builtinKinds))
	for i, b := range builtinKinds {
		out[i] = b.kind
	}
	return out
}

// A bindingFactory makes env bindings that are no built-in cell (R2:
// objects in the fleet bucket) from a deployment's manifest.
type bindingFactory func(m *deploy.Manifest, store bucket.Store) map[string]worker.Binding

// otherBindings are the sorts of bindings that are no cell, one
// registration each.
var otherBindings []bindingFactory

// dataBindings builds dep's env bindings of every registered sort; the
// built-in cells' go through this node (local or remote owner).
func (o *objects) dataBindings(dep *deploy.Deployment) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	for _, b := range builtinKinds {
		maps.Copy(out, b.bindings(&dep.Manifest, o))
	}
	for _, f := range otherBindings {
		maps.Copy(out, f(&dep.Manifest, o.store))
	}
	for name, b := range o.r2Bindings(dep) {
		out[name] = b
	}
	return out
}

func (r *resident) objectDone() <-chan struct{} {
	if r.obj == nil {
		return nil // a built-in cell stops only when told to
	}
	return r.obj.Done()
}

func (r *resident) busy() int {
	if r.obj == nil {
		return r.bi.Busy()
	}
	return r.obj.Busy()
}

// closeObject stops the object; for a built-in cell it waits for the
// request running, if any, and refuses later ones.
func (r *resident) closeObject(ctx context.Context) error {
	if r.obj != nil {
		return r.obj.Close(ctx)
	}
	r.bi.Close()
	return nil
}

// splitBuiltin checks that name is a built-in cell this node can host.
func (o *objects) splitBuiltin(name string) (kind, id string, err error) {
	k, id, err := o.builtins.Split(name)
	if err != nil {
		return "", "", err
	}
	return k.Name, id, nil
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
			out, err = host.CallPeerCell(ctx, h, h.node, name, req)
		default:
			return nil, fmt.Errorf("built-in cell %s: unexpected handle %T", name, h)
		}
		if errors.Is(err, worker.ErrObjectClosed) && attempt < 3 && ctx.Err() == nil {
			continue // stopped or moved under us: resolve it again
		}
		return out, err
	}
}

func (r *resident) callBuiltin(ctx context.Context, req []byte) ([]byte, error) {
	r.inflight.Add(1)
	defer r.done()
	if q := r.queue; q != nil {
		if n := q.group.Waiting() + r.bi.Busy(); n >= queueMaxCalls {
			return nil, fmt.Errorf("%s: %w (%d requests waiting)", r.cell, ErrQueueOverloaded, n)
		}
		if queue.IsSend(req) {
			return q.group.Send(ctx, req) // group commit (queues.go)
		}
	}
	return r.callCell(ctx, req)
}

// callCell runs req on the built-in cell's handler, behind its output
// gate.
func (r *resident) callCell(ctx context.Context, req []byte) ([]byte, error) {
	out, err := r.bi.Call(ctx, req)
	if errors.Is(err, host.ErrBuiltinClosed) {
		err = fmt.Errorf("%w: %w", worker.ErrObjectClosed, err)
	}
	if err == nil && r.alarm.hints != nil {
		// A built-in cell with an alarm (a queue): its wake entry is out
		// before the answer, like any output that reveals it.
		mark := r.wakeMark()
		if werr := r.wakeWait(ctx, mark); werr != nil {
			return nil, fmt.Errorf("output of %s withheld: %w", r.cell, werr)
		}
		r.wakeConfirmed(mark)
	}
	return out, err
}

// PostPeer sends a signed request to the owner (host.PeerPoster).
func (r remote) PostPeer(ctx context.Context, path string, query url.Values, body []byte) (int, []byte, error) {
	resp, data, err := r.post(ctx, path, query, body)
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

var _ host.PeerPoster = remote{}

// serveCellCall is the peer route for built-in cell requests: it runs on a
// cell resident here or activates it; it never forwards.
func (p *peer) serveCellCall(w http.ResponseWriter, r *http.Request) {
	body, ok := p.verified(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("cell")
	k, id, err := p.objects.builtins.Split(name)
	if err == nil && k.CheckRequest != nil {
		err = k.CheckRequest(body) // before the cell wakes for it
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	kind := k.Name
	ctx := withFromPeer(r.Context())
	h, err := p.objects.local(ctx, kind, id)
	var out []byte
	if err == nil {
		out, err = h.(handle).r.callBuiltin(ctx, body)
	}
	var else_ *fleet.ElsewhereError
	var re *host.RequestError
	switch {
	case err == nil:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	case errors.As(err, &re):
		writeJSON(w, http.StatusUnprocessableEntity, host.PeerRefusal(re))
	case errors.As(err, &else_):
		writeJSON(w, http.StatusMisdirectedRequest, peerMoved{Node: else_.Node, Advertise: else_.Advertise})
	default:
		peerUnavailable(w, err)
	}
}
