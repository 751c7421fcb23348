// Package tui is celld top: a live view of the fleet built on bubbletea
// and lipgloss. It sees the fleet only through a Source, which finds nodes
// and asks each for GET /state; it never imports the server (only its wire
// types in server/api).
//
// It decides how a node's answers and lease add up to a status (Merge), and
// how the fleet is drawn (Model.View, RenderText). It deliberately does not
// act on the fleet: draining a node is POST /shutdown, not a key here.
package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/server/api"
)

// Source takes one look at the fleet. tracked lists the addresses the view
// still follows (every node not gone); a source polls them even when their
// lease has disappeared, so a node that deleted its lease but still answers
// is seen, and one that went quiet is recognised as gone. Poll never fails
// as a whole: per-node and listing failures are reported inside.
type Source interface {
	Poll(ctx context.Context, req PollRequest) Observation
}

// PollRequest is what the view wants from one poll.
type PollRequest struct {
	// Tracked lists the addresses the view still follows.
	Tracked []string
	// Detail is the node whose cells the view shows: it is asked for its
	// whole state, every other node for a summary (counters and the top
	// SummaryCells cells), so a poll's size does not grow with the fleet's
	// cells.
	Detail string
	// Full asks every node for its whole state (celld top --once/--json).
	Full bool
}

// SummaryCells is how many cells a summary answer lists.
const SummaryCells = 10

// Observation is what one poll saw.
type Observation struct {
	AtMS int64 // local clock when the poll was taken (Unix ms)
	// Listed: the leases were read this time, so a node with no lease in
	// Nodes has none in the bucket.
	Listed bool
	// ListErr is why the leases could not be read (Listed is false); it
	// keeps the store's classification for the caller's exit code.
	ListErr error
	// Static: the nodes were named by address (--node); no bucket is read.
	Static bool
	Nodes  []NodeObservation
}

// NodeObservation is one node's answer, or why there was none.
type NodeObservation struct {
	Addr  string     // internal address polled
	Node  string     // node name from its lease, "" when not known
	Lease *LeaseSeen // the lease record, nil if none was found (or none read)
	State *api.State // the answer of GET /state, nil when it did not answer
	Err   string     // why it did not answer
}

// LeaseSeen is the part of a node lease top shows.
type LeaseSeen struct {
	Session   string `json:"session"`
	ExpiresMS int64  `json:"expires_ms"`
}

// DefaultFetchTimeout bounds one GET /state.
const DefaultFetchTimeout = 2 * time.Second

// maxStateBytes bounds a /state answer (a node with very many resident
// cells lists them all; anything past this is not a state we can show).
const maxStateBytes = 64 << 20

// StateClient fetches GET /state from a node's internal listener.
type StateClient struct {
	HTTP *http.Client // default: one with DefaultFetchTimeout
}

// Fetch asks the node at addr (host:port) for its whole state.
func (c StateClient) Fetch(ctx context.Context, addr string) (*api.State, error) {
	return c.fetch(ctx, addr, true)
}

// fetch asks for the whole state, or a summary (GET /state?summary=1).
func (c StateClient) fetch(ctx context.Context, addr string, full bool) (*api.State, error) {
	path := "/state"
	if !full {
		path += "?summary=1&top=" + strconv.Itoa(SummaryCells)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultFetchTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return nil, fmt.Errorf("get state: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get state: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("get state: %s", resp.Status)
	}
	var st api.State
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxStateBytes)).Decode(&st); err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	return &st, nil
}

// BucketSource finds nodes from their leases in the bucket and polls each.
type BucketSource struct {
	Store  bucket.Store
	Client StateClient
	Now    func() time.Time // default time.Now
}

var _ Source = (*BucketSource)(nil)

// Poll lists the node leases (tool leases are not nodes) and fetches every
// node's state. A lease that had expired when it was listed is a node
// that stopped without a drain: it is reported (the view marks it dead)
// but not asked, unless the view still tracks it.
func (b *BucketSource) Poll(ctx context.Context, req PollRequest) Observation {
	tracked := req.Tracked
	now := nowFunc(b.Now)
	obs := Observation{AtMS: now().UnixMilli()}
	isTracked := map[string]bool{}
	for _, a := range tracked {
		isTracked[a] = true
	}
	byAddr := map[string]NodeObservation{}
	leases, err := fleet.ListLeases(ctx, b.Store)
	if err != nil {
		obs.ListErr = err
	} else {
		obs.Listed = true
		for _, li := range leases {
			l := li.Lease
			if li.Err != "" || l.Kind == core.KindTool || l.Advertise == "" {
				continue
			}
			if prev, dup := byAddr[l.Advertise]; dup && prev.Lease.ExpiresMS >= l.Expires {
				continue // two records name one address: the fresher one is the live node
			}
			byAddr[l.Advertise] = NodeObservation{Addr: l.Advertise, Node: l.Node, Lease: &LeaseSeen{Session: l.Session, ExpiresMS: l.Expires}}
		}
	}
	var skip map[string]bool
	for addr, o := range byAddr {
		if o.Lease.ExpiresMS <= obs.AtMS && !isTracked[addr] {
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[addr] = true
		}
	}
	for _, a := range tracked {
		if _, ok := byAddr[a]; !ok {
			byAddr[a] = NodeObservation{Addr: a}
		}
	}
	obs.Nodes = fetchAll(ctx, b.Client, byAddr, req, skip)
	return obs
}

// AddrSource polls a fixed list of internal addresses (celld top --node);
// it reads no bucket.
type AddrSource struct {
	Addrs  []string
	Client StateClient
	Now    func() time.Time // default time.Now
}

var _ Source = (*AddrSource)(nil)

// Poll fetches every named node's state.
func (a *AddrSource) Poll(ctx context.Context, req PollRequest) Observation {
	obs := Observation{AtMS: nowFunc(a.Now)().UnixMilli(), Static: true}
	byAddr := map[string]NodeObservation{}
	for _, addr := range a.Addrs {
		byAddr[addr] = NodeObservation{Addr: addr}
	}
	obs.Nodes = fetchAll(ctx, a.Client, byAddr, req, nil)
	return obs
}

// fetchAll asks every node at once (but those in skip) and returns the
// answers by address: req.Detail (or with req.Full, every node) for its
// whole state, the others for a summary.
func fetchAll(ctx context.Context, c StateClient, byAddr map[string]NodeObservation, req PollRequest, skip map[string]bool) []NodeObservation {
	out := make([]NodeObservation, 0, len(byAddr))
	for _, o := range byAddr {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	var wg sync.WaitGroup
	for i := range out {
		if skip[out[i].Addr] {
			out[i].Err = "lease expired: not asked"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := c.fetch(ctx, out[i].Addr, req.Full || out[i].Addr == req.Detail)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].State = st
		}()
	}
	wg.Wait()
	return out
}

func nowFunc(f func() time.Time) func() time.Time {
	if f == nil {
		return time.Now
	}
	return f
}
