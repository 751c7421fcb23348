package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/diagnose"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/fleetlog"
	"github.com/celldgo/celld/server/api"
)

// Durability modes (CELLD_DURABILITY).
const (
	DurabilityBucket = "bucket"
	DurabilityFleet  = "fleet"
)

// fleetDurability is a node's fleet durability (docs/fleet-durability.md):
// its follower disk, its session's replication group, and the takeover
// recovery gate its acquisitions run.
type fleetDurability struct {
	disk    *fleetlog.Disk
	log     atomic.Pointer[fleetlog.Log]
	rec     *fleetlog.Recoverer
	signer  *fleet.Signer
	fn      atomic.Pointer[fleet.Node]
	lost    chan error // a cell stopped with a tail the bucket may lack
	options Options
}

// newFleetDurability checks the mode and, for fleet, opens the follower
// disk (beside the cells' files). nil in bucket mode.
func newFleetDurability(o Options, secret []byte, log *slog.Logger) (*fleetDurability, error) {
	switch o.Durability {
	case DurabilityBucket:
		return nil, nil
	case "", DurabilityFleet:
	default:
		return nil, fmt.Errorf("CELLD_DURABILITY=%q: want bucket or fleet", o.Durability)
	}
	disk, err := fleetlog.OpenDisk(filepath.Join(o.StateDir, ".fleetlog"))
	if err != nil {
		return nil, err
	}
	signer := &fleet.Signer{Secret: secret, Node: o.Node}
	return &fleetDurability{disk: disk, signer: signer, lost: make(chan error, 1), options: o,
		rec: &fleetlog.Recoverer{Store: o.Store, Signer: signer, RetryEvery: o.RecoveryRetry, Retries: o.RecoveryRetries, Logger: log}}, nil
}

// routes serves the follower side on mux: seal and forget from the
// start, the rest once the node serves.
func (f *fleetDurability) routes(mux *http.ServeMux, secret []byte) {
	fleetlog.Routes(mux, f.disk, &fleet.Verifier{Secret: secret}, func() bool {
		fn := f.fn.Load()
		return fn != nil && fn.Serving()
	}, func(from string) {
		if l := f.log.Load(); l != nil {
			l.Hello(from)
		}
	})
}

// started is called once the lease is held: the session's log begins
// (resumed: a preserve drain left this session, and its record).
func (f *fleetDurability) started(fn *fleet.Node, objs *objects, log *slog.Logger, resumed bool) {
	f.fn.Store(fn)
	f.rec.Session = fn.Session()
	l := fleetlog.NewLog(fleetlog.Config{Store: f.options.Store, Node: f.options.Node, Session: fn.Session(), Disk: f.disk,
		Signer: f.signer, Delay: f.options.FleetUpload, Transfer: f.options.FleetTransfer, Logger: log, Resume: resumed})
	f.log.Store(l)
	// Cells activated before the first lease listing would not know
	// whether the node is alone (host.Open replicates a lone node's
	// cells as in bucket mode).
	select {
	case <-l.Scanned():
	case <-time.After(10 * time.Second):
	}
	objs.host.UseFleet(l, func(cell string, err error) {
		log.Error("cell stopped with fleet-acknowledged writes the bucket may lack; ending this session so its successor recovers them", "cell", cell, "err", err)
		select {
		case f.lost <- fmt.Errorf("%s: %w", cell, err):
		default:
		}
	})
}

// drained: every cell was released (flushed to its prefix); the session's
// record is sealed, so a successor needs no recovery, and its followers
// forget it.
func (f *fleetDurability) drained(ctx context.Context) {
	if f != nil {
		if l := f.log.Load(); l != nil {
			l.SealClean(ctx)
		}
	}
}

func (f *fleetDurability) close() {
	if f != nil {
		if l := f.log.Load(); l != nil {
			l.Close()
		}
	}
}

// state is the /state view.
func (f *fleetDurability) state() api.Durability {
	if f == nil {
		return api.Durability{Mode: DurabilityBucket}
	}
	d := api.Durability{Mode: DurabilityFleet, Disk: f.disk.ID(), Followers: []api.Follower{}, RecoveryInProgress: f.rec.InProgress(), Recovered: f.rec.Recovered()}
	d.FollowerRetainedBytes, d.FollowerSessions = f.disk.Retained()
	if l := f.log.Load(); l != nil {
		st := l.State()
		for _, m := range st.Followers {
			d.Followers = append(d.Followers, api.Follower{Node: m.Node, Disk: m.Disk})
		}
		d.Joining, d.LogRecord, d.LogFenced = st.Joining, string(st.Record), st.Fenced
		d.RetainedBytes, d.FleetAcked, d.BucketProofs = st.RetainedBytes, st.FleetAcked, st.BucketProofs
		d.Packs, d.PackBytes, d.LivePacks, d.PackFloor = st.Packs, st.PackBytes, st.LivePacks, st.PackFloor
		d.AppendsHedged = l.Hedges()
	}
	return d
}

// durabilityMode is CELLD_DURABILITY as published in the lease: a node's
// own "" is the default, fleet.
func durabilityMode(mode string) string {
	if mode == "" {
		return DurabilityFleet
	}
	return mode
}

// leaseMode is the durability mode of another node's lease: one without a
// mode is from a node that predates fleet durability, bucket.
func leaseMode(mode string) string {
	if mode == "" {
		return DurabilityBucket
	}
	return mode
}

// checkModes refuses to run beside live nodes of another durability mode
// (exit 2): a bucket-mode node neither follows nor runs the takeover
// recovery gate, so taking over a fleet-mode node's cell it could restore
// without the tail the followers hold. A lease without a mode is from a
// node that predates fleet durability: bucket. Tool leases do not count.
// Two nodes started at the same moment can both pass; every node checks
// again at each start.
func checkModes(ctx context.Context, store bucket.Store, node, mode string) error {
	leases, err := fleet.ListLeases(ctx, store)
	if err != nil {
		return nil // the lease loop will meet the same store; nothing to refuse on
	}
	now := time.Now().UnixMilli()
	var others []string
	theirs := ""
	for _, li := range leases {
		l := li.Lease
		if li.Err != "" || l.Node == node || l.Kind == core.KindTool || l.Expires <= now {
			continue
		}
		if m := leaseMode(l.Durability); m != mode {
			others, theirs = append(others, l.Node), m
		}
	}
	if len(others) == 0 {
		return nil
	}
	return &diagnose.EnvError{
		Err: fmt.Errorf("CELLD_DURABILITY=%s on node %s, but the live fleet runs CELLD_DURABILITY=%s (node %s): every node of a fleet must run the same durability mode",
			mode, node, theirs, strings.Join(others, ", ")),
		Hint: "start this node with CELLD_DURABILITY=" + theirs + ", or stop every node and restart them all in one mode (docs/fleet-durability.md)",
	}
}
