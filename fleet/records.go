package fleet

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// Format is the bucket layout version this build reads and writes.
const Format = 1

// EnsureFormat creates fleet/format.json on a new bucket and refuses a
// bucket written in a format this build does not know.
func EnsureFormat(ctx context.Context, s bucket.Store) error {
	_, err := s.Put(ctx, core.FormatKey, core.Encode(map[string]int{"format": Format}), bucket.IfAbsent())
	switch bucket.OutcomeOf(err) {
	case bucket.Applied:
		return nil
	case bucket.Rejected, bucket.Ambiguous:
	default:
		return fmt.Errorf("write %s: %w", core.FormatKey, err)
	}
	data, _, err := s.Get(ctx, core.FormatKey)
	if err != nil {
		return fmt.Errorf("read %s: %w", core.FormatKey, err)
	}
	var f struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("read %s: %w", core.FormatKey, err)
	}
	if f.Format != Format {
		return fmt.Errorf("bucket format %d is not supported by this celld (it knows format %d): upgrade celld", f.Format, Format)
	}
	return nil
}

type peerAuth struct {
	Version int    `json:"version"`
	Secret  string `json:"secret"`
	Created int64  `json:"created"`
}

// PeerSecret returns the fleet's HMAC secret, creating it once (the first
// node to create it wins; everyone reads the winner's).
func PeerSecret(ctx context.Context, s bucket.Store) ([]byte, error) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	rec := peerAuth{Version: 1, Secret: base64.StdEncoding.EncodeToString(b[:]), Created: time.Now().UnixMilli()}
	_, err := s.Put(ctx, core.PeerAuthKey, core.Encode(rec), bucket.IfAbsent())
	switch bucket.OutcomeOf(err) {
	case bucket.Applied:
		return b[:], nil
	case bucket.Rejected, bucket.Ambiguous:
	default:
		return nil, fmt.Errorf("write %s: %w", core.PeerAuthKey, err)
	}
	data, _, err := s.Get(ctx, core.PeerAuthKey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", core.PeerAuthKey, err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("read %s: %w", core.PeerAuthKey, err)
	}
	secret, err := base64.StdEncoding.DecodeString(rec.Secret)
	if err != nil || len(secret) != 32 {
		return nil, fmt.Errorf("read %s: secret is not 32 base64-encoded bytes", core.PeerAuthKey)
	}
	return secret, nil
}

// LeaseInfo is a node lease as found in the bucket.
type LeaseInfo struct {
	Key   string     `json:"key"`
	Lease core.Lease `json:"lease"`
	Err   string     `json:"error,omitempty"` // an unreadable record
}

// ListLeases reads every node lease record, sorted by node name.
func ListLeases(ctx context.Context, s bucket.Store) ([]LeaseInfo, error) {
	objs, err := bucket.ListAll(ctx, s, core.NodesPrefix)
	if err != nil {
		return nil, fmt.Errorf("list node leases: %w", err)
	}
	out := []LeaseInfo{}
	for _, o := range objs {
		if !strings.HasSuffix(o.Key, ".json") {
			continue
		}
		data, _, err := s.Get(ctx, o.Key)
		if bucket.OutcomeOf(err) == bucket.NotFound {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", o.Key, err)
		}
		li := LeaseInfo{Key: o.Key}
		if l, err := core.DecodeLease(data); err != nil {
			li.Err = err.Error()
		} else {
			li.Lease = l
		}
		out = append(out, li)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// CellInfo is a cell's ownership record as found in the bucket, with the
// liveness of its owner's lease.
type CellInfo struct {
	Cell      string   `json:"cell"`
	Own       core.Own `json:"own"`
	OwnerLive bool     `json:"owner_live"` // the named session holds an unexpired lease
	Advertise string   `json:"advertise,omitempty"`
	// LeaseExpires is the live owner's published lease expiry (unix ms).
	LeaseExpires int64  `json:"lease_expires_ms,omitempty"`
	Err          string `json:"error,omitempty"`
	// Lease is the owner's lease record as LookupCell read it, and
	// LeaseRead when that read completed (this process's clock): a
	// command hands both to its tool lease (Node.SawLease) so that
	// watching the owner's lease starts at this read.
	Lease     core.Lease `json:"-"`
	LeaseRead time.Time  `json:"-"`
}

// ListCells reads every ownership record under cells/, sorted by cell,
// judging owner liveness against now (unix ms).
func ListCells(ctx context.Context, s bucket.Store, now int64) ([]CellInfo, error) {
	leases, err := ListLeases(ctx, s)
	if err != nil {
		return nil, err
	}
	bySession := map[string]core.Lease{}
	for _, l := range leases {
		if l.Err == "" {
			bySession[l.Lease.Session] = l.Lease
		}
	}
	objs, err := bucket.ListAll(ctx, s, core.CellsPrefix)
	if err != nil {
		return nil, fmt.Errorf("list cells: %w", err)
	}
	out := []CellInfo{}
	for _, o := range objs {
		rest, ok := strings.CutPrefix(o.Key, core.CellsPrefix)
		cell, ok2 := strings.CutSuffix(rest, "/own.json")
		if !ok || !ok2 || strings.Contains(cell, "/") {
			continue
		}
		data, _, err := s.Get(ctx, o.Key)
		if bucket.OutcomeOf(err) == bucket.NotFound {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", o.Key, err)
		}
		ci := CellInfo{Cell: cell}
		if own, err := core.DecodeOwn(data); err != nil {
			ci.Err = err.Error()
		} else {
			ci.Own = own
			if l, ok := bySession[own.Session]; ok && !own.Released && l.Expires > now {
				ci.OwnerLive, ci.Advertise, ci.LeaseExpires = true, l.Advertise, l.Expires
			}
		}
		out = append(out, ci)
	}
	return out, nil
}

// LookupCell reads one cell's ownership record and its owner's lease,
// judging liveness against now (unix ms). A cell never acquired is
// returned with a zero Own and bucket.ErrNotFound is not an error.
func LookupCell(ctx context.Context, s bucket.Store, cell string, now int64) (CellInfo, error) {
	ci := CellInfo{Cell: cell}
	data, _, err := s.Get(ctx, core.OwnKey(cell))
	if bucket.OutcomeOf(err) == bucket.NotFound {
		return ci, nil
	}
	if err != nil {
		return ci, fmt.Errorf("read %s: %w", core.OwnKey(cell), err)
	}
	own, err := core.DecodeOwn(data)
	if err != nil {
		return ci, fmt.Errorf("read %s: %w", core.OwnKey(cell), err)
	}
	ci.Own = own
	if own.Released {
		return ci, nil
	}
	ldata, _, err := s.Get(ctx, core.LeaseKey(own.Node))
	if bucket.OutcomeOf(err) == bucket.NotFound {
		return ci, nil
	}
	if err != nil {
		return ci, fmt.Errorf("read %s: %w", core.LeaseKey(own.Node), err)
	}
	read := time.Now()
	l, err := core.DecodeLease(ldata)
	if err != nil {
		return ci, fmt.Errorf("read %s: %w", core.LeaseKey(own.Node), err)
	}
	ci.Lease, ci.LeaseRead = l, read
	if l.Session == own.Session && l.Expires > now {
		ci.OwnerLive, ci.Advertise, ci.LeaseExpires = true, l.Advertise, l.Expires
	}
	return ci, nil
}
