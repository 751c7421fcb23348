package fleetlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// Config of a node's fleet log.
type Config struct {
	Store         bucket.Store
	Node, Session string
	Disk          *Disk
	Signer        *fleet.Signer
	// Now is the clock lease expiries are judged by (default time.Now).
	Now func() time.Time
	// Delay is how long a proven segment may wait for its upload in a
	// log pack (CELLD_FLEET_UPLOAD_MS). Default 200 ms.
	Delay time.Duration
	// Transfer is how long a packed segment may wait for its cell's own
	// upload, merged with the cell's others (CELLD_FLEET_TRANSFER_MS).
	// Default 30 s.
	Transfer time.Duration
	// AppendTimeout bounds one append to the members. Default 2 s.
	AppendTimeout time.Duration
	// Slow, when set, is how long a member may take to answer an append
	// before it is failed; default derived from its recent latency
	// (send.go).
	Slow time.Duration
	// Recruit is how often the group looks for followers. Default 1 s.
	Recruit time.Duration
	// Resume: the process resumed a session a preserve drain left; its
	// record (and group) is adopted rather than created.
	Resume bool
	Logger *slog.Logger
}

// Log is the owner side of one process session: its replication group
// (up to two followers from live leases), the node log record naming
// them, and the segments the bucket does not have yet.
type Log struct {
	cfg    Config
	client *http.Client
	log    *slog.Logger

	recMu sync.Mutex // one record write at a time

	mu       sync.Mutex
	rec      core.LogRecord
	etag     string
	exists   bool
	fenced   bool // the record left open: no more fleet proofs
	pending  *core.LogRecord
	addrs    map[string]string // member node → advertise
	joining  *member
	failed   map[core.Member]bool
	tails    map[tailID]*tail
	acked    int64 // segments acknowledged on fleet proofs
	unproven int64 // segments left to bucket proofs
	stop     chan struct{}
	stopOnce sync.Once
	urgent   chan struct{} // closed to ask every replicator to upload now
	// peers: other live nodes the last lease listing found; -1 before the
	// first. scanned is closed after the first; wake asks the recruit
	// loop to look again (another node said hello).
	peers   int
	scanned chan struct{}
	wake    chan struct{}
	// pipelined appends (send.go)
	senders map[core.Member]*sender
	waiters map[*waiter]struct{}

	// log packs (pack.go)
	packKick    chan struct{}
	packing     *pack                        // written, not yet known to be in the bucket
	nextPack    uint64                       // seq of the next pack
	live        map[uint64]map[tailID]uint64 // packs in the bucket, not deleted: each cell epoch's last TXID
	covered     map[tailID]uint64            // the cells' prefixes hold through
	floorAt     time.Time                    // last floor write
	doomed      []uint64                     // packs below the floor, to delete
	deleting    bool                         // deleteDoomed runs
	lastFull    bool                         // the last pack gathered left segments out for size
	packs       int64
	packBytes   int64
	packFailing bool
}

type member struct {
	core.Member
	addr string
}

type tailID struct {
	cell  string
	epoch uint64
}

// tail is one cell epoch's segments the bucket may lack.
type tail struct {
	segs     []cell.Segment // in no pack and not in the cell's prefix
	uploaded uint64         // the cell's prefix holds through
	packed   uint64         // a pack holds through
	trimmed  uint64         // the members were told to drop through
	proven   uint64         // last TXID acknowledged on a fleet proof
}

// inBucket: the bucket holds the tail through this TXID (prefix or pack).
func (t *tail) inBucket() uint64 { return max(t.uploaded, t.packed) }

func (t *tail) dropThrough(txid uint64) {
	t.segs = slices.DeleteFunc(t.segs, func(s cell.Segment) bool { return s.Max <= txid })
}

// pruneLocked forgets a tail the cell's prefix holds entirely. Call with
// l.mu held.
func (l *Log) pruneLocked(id tailID, t *tail) {
	if len(t.segs) == 0 && t.proven <= t.uploaded && t.packed <= t.uploaded {
		delete(l.tails, id)
	}
}

var _ cell.Fleet = (*Log)(nil)

// NewLog starts a session's fleet log (recruiting in the background).
func NewLog(cfg Config) *Log {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Delay <= 0 {
		cfg.Delay = 200 * time.Millisecond
	}
	if cfg.AppendTimeout <= 0 {
		cfg.AppendTimeout = 2 * time.Second
	}
	if cfg.Recruit <= 0 {
		cfg.Recruit = time.Second
	}
	if cfg.Transfer <= 0 {
		cfg.Transfer = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	// Keep-alive connections to the members: a few per member for the
	// pipelined appends and their hedges, more for recovery's reads.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4 * sendWindow
	l := &Log{cfg: cfg, client: &http.Client{Timeout: 30 * time.Second, Transport: tr}, log: cfg.Logger,
		senders: map[core.Member]*sender{}, waiters: map[*waiter]struct{}{},
		addrs: map[string]string{}, failed: map[core.Member]bool{}, tails: map[tailID]*tail{}, stop: make(chan struct{}),
		urgent: make(chan struct{}), packKick: make(chan struct{}, 1), nextPack: 1, live: map[uint64]map[tailID]uint64{},
		covered: map[tailID]uint64{}, peers: -1, scanned: make(chan struct{}), wake: make(chan struct{}, 1)}
	go l.recruitLoop()
	go l.packLoop()
	return l
}

// Active reports that fleet proofs are possible for a cell activated
// now: the group has a member or a joiner, or the last lease listing found
// another live node. A node alone (a single node, celld dev) is not: its
// cells replicate exactly as in bucket mode (host.Open), and the log
// lists leases again only when another node says hello.
func (l *Log) Active() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.fenced && (len(l.rec.Members) > 0 || l.joining != nil || l.peers > 0)
}

// Scanned is closed once the first lease listing (and recruitment) ran.
func (l *Log) Scanned() <-chan struct{} { return l.scanned }

// Hello hears that node from said hello to this node's follower side: it
// is live. A log that knew of no other node, or whose group is short of
// one it does not have, looks for followers now.
func (l *Log) Hello(from string) {
	l.mu.Lock()
	known := l.joining != nil && l.joining.Node == from
	for _, m := range l.rec.Members {
		known = known || m.Node == from
	}
	short := len(l.rec.Members) < 2
	alone := l.peers <= 0
	l.mu.Unlock()
	if alone || short && !known && from != l.cfg.Node {
		l.Kick()
	}
}

// Kick asks the log to look for followers now.
func (l *Log) Kick() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Close stops recruiting.
func (l *Log) Close() { l.stopOnce.Do(func() { close(l.stop) }) }

// Delay implements cell.Fleet: the cells' own uploads wait Transfer (the
// packs hold their segments meanwhile).
func (l *Log) Delay() time.Duration { return l.cfg.Transfer }

// Urgent implements cell.Fleet.
func (l *Log) Urgent() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.urgent
}

// flushNow asks every replicator to upload what it holds. Call with l.mu
// held.
func (l *Log) flushNow() {
	close(l.urgent)
	l.urgent = make(chan struct{})
}

// needFlush: the group needs the bucket to hold every acknowledged segment:
// a pack now, or the cells' own uploads while packs fail. Call with l.mu
// held.
func (l *Log) needFlush() {
	l.kickPack()
	if l.packFailing || !l.exists {
		l.flushNow()
	}
}

// State is the log as /state shows it.
type State struct {
	Session       string        `json:"session"`
	Record        core.LogState `json:"record"` // "" before it exists
	Fenced        bool          `json:"fenced"`
	Followers     []core.Member `json:"followers"`
	Joining       string        `json:"joining,omitempty"`
	RetainedBytes int64         `json:"retained_bytes"` // held here for the bucket
	FleetAcked    int64         `json:"fleet_acked"`
	BucketProofs  int64         `json:"bucket_proofs"`
	Packs         int64         `json:"packs"`      // log packs written
	PackBytes     int64         `json:"pack_bytes"` // their bytes
	LivePacks     int           `json:"live_packs"` // in the bucket, not yet deleted
	PackFloor     uint64        `json:"pack_floor"`
}

// State reports the log.
func (l *Log) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := State{Session: l.cfg.Session, Fenced: l.fenced, Followers: slices.Clone(l.rec.Members), FleetAcked: l.acked, BucketProofs: l.unproven,
		Packs: l.packs, PackBytes: l.packBytes, LivePacks: len(l.live), PackFloor: l.rec.Floor()}
	if l.exists {
		st.Record = l.rec.State
	}
	if st.Followers == nil {
		st.Followers = []core.Member{}
	}
	if l.joining != nil {
		st.Joining = l.joining.Node
	}
	for _, t := range l.tails {
		for _, s := range t.segs {
			st.RetainedBytes += int64(len(s.Data))
		}
	}
	return st
}

// Send implements cell.Fleet: queue s for every member (and a joiner)
// at once — segments go out in the order Send is called — and return the
// wait for the acknowledgement rule's verdict.
func (l *Log) Send(ctx context.Context, s cell.Segment) func() bool {
	l.mu.Lock()
	id := tailID{s.Cell, s.Epoch}
	t := l.tails[id]
	if t == nil {
		t = &tail{uploaded: max(s.After, l.covered[id])}
		l.tails[id] = t
	}
	s.After = max(s.After, t.inBucket()) // the members' ranges may start after a pack
	t.segs = append(t.segs, s)
	targets := l.targets()
	fenced := l.fenced
	l.mu.Unlock()
	if fenced || len(targets) == 0 {
		l.count(false)
		return func() bool { return false }
	}
	w := l.enqueue(targets, s)
	return func() bool {
		proven := l.await(ctx, w)
		if proven {
			l.mu.Lock()
			t.proven = max(t.proven, s.Max)
			l.mu.Unlock()
		}
		l.count(proven)
		return proven
	}
}

// Append sends s and waits for the verdict (Send).
func (l *Log) Append(ctx context.Context, s cell.Segment) bool { return l.Send(ctx, s)() }

func (l *Log) count(proven bool) {
	l.mu.Lock()
	if proven {
		l.acked++
	} else {
		l.unproven++
	}
	l.mu.Unlock()
}

// targets are the members and the joiner. Call with l.mu held.
func (l *Log) targets() []member {
	var out []member
	for _, m := range l.rec.Members {
		out = append(out, member{m, l.addrs[m.Node]})
	}
	if l.joining != nil {
		out = append(out, *l.joining)
	}
	return out
}

// provenLocked applies core.FleetAcked to the record as it stands now
// (and the one being written). Call with l.mu held.
func (l *Log) provenLocked(ok map[core.Member]bool) bool {
	return !l.fenced && l.exists && core.FleetAcked(l.rec, l.pending, func(m core.Member) bool { return ok[m] }, core.MutNone)
}

// sendAll appends segs to every target at once and reports who fsynced.
func (l *Log) sendAll(ctx context.Context, targets []member, segs []cell.Segment) map[core.Member]bool {
	var buf bytes.Buffer
	for _, s := range segs {
		writeFrame(&buf, s)
	}
	writeEnd(&buf)
	body := buf.Bytes()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.AppendTimeout)
	defer cancel()
	var mu sync.Mutex
	ok := map[core.Member]bool{}
	var wg sync.WaitGroup
	for _, m := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := url.Values{"node": {l.cfg.Node}, "session": {l.cfg.Session}, "disk": {m.Disk}}
			status, data, err := l.post(ctx, m.addr, PathAppend, q, body)
			if err != nil || status != http.StatusOK {
				l.log.Warn("fleet append refused or failed", "member", m.Node, "status", status, "err", err, "body", string(bytes.TrimSpace(data)))
				return
			}
			mu.Lock()
			ok[m.Member] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	return ok
}

func (l *Log) post(ctx context.Context, addr, path string, q url.Values, body []byte) (int, []byte, error) {
	if addr == "" {
		return 0, nil, errors.New("no address")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	l.cfg.Signer.Sign(req, body)
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, data, err
}

// Uploaded implements cell.Fleet: the bucket holds cell's segments at
// epoch through txid; drop them here and on the members.
func (l *Log) Uploaded(cellName string, epoch, txid uint64) {
	l.mu.Lock()
	id := tailID{cellName, epoch}
	l.covered[id] = max(l.covered[id], txid)
	var trims []trim
	if t := l.tails[id]; t != nil {
		t.uploaded = max(t.uploaded, txid)
		t.dropThrough(t.inBucket())
		if txid > t.trimmed {
			t.trimmed = txid
			trims = append(trims, trim{Cell: cellName, Epoch: epoch, Through: txid})
		}
		l.pruneLocked(id, t)
	}
	targets := l.targets()
	retry := len(l.failed) > 0
	l.mu.Unlock()
	l.trimMembers(targets, trims)
	if retry {
		go l.reconcile()
	}
}

type trim struct {
	Cell    string `json:"cell"`
	Epoch   uint64 `json:"epoch"`
	Through uint64 `json:"through"`
}

// flushedLocked: the bucket holds every segment acknowledged on a fleet
// proof. Call with l.mu held.
func (l *Log) flushedLocked() bool {
	for _, t := range l.tails {
		if t.proven > t.inBucket() {
			return false
		}
	}
	return true
}

func (l *Log) memberFailed(m core.Member) {
	l.mu.Lock()
	l.failed[m] = true
	l.mu.Unlock()
	l.Kick()
	go l.reconcile()
}

// reconcile drops failed members the rule allows dropping (core.MayDrop):
// one at a time, after probing the members that stay, while the bucket
// lacks acknowledged segments; every failed one at once (and any that
// fails its probe) once the bucket has them all. A member it may not drop
// yet makes every replicator upload now, and the next upload retries.
func (l *Log) reconcile() {
	l.recMu.Lock()
	defer l.recMu.Unlock()
	for {
		l.mu.Lock()
		for m := range l.failed {
			if !slices.Contains(l.rec.Members, m) {
				delete(l.failed, m)
			}
		}
		if len(l.failed) == 0 || l.fenced {
			l.mu.Unlock()
			return
		}
		flushed := l.flushedLocked()
		var drop []core.Member
		for _, m := range l.rec.Members {
			if l.failed[m] && core.MayDrop(l.rec, m, flushed) {
				drop = append(drop, m)
				if !flushed {
					break // one at a time
				}
			}
		}
		if len(drop) == 0 {
			l.needFlush()
			l.mu.Unlock()
			return
		}
		next := l.rec
		next.Members = slices.DeleteFunc(slices.Clone(l.rec.Members), func(x core.Member) bool { return slices.Contains(drop, x) })
		stay := []member{}
		for _, m := range next.Members {
			stay = append(stay, member{m, l.addrs[m.Node]})
		}
		l.mu.Unlock()
		// The members that stay must still be what the record names.
		for _, m := range stay {
			if l.probe(m) {
				continue
			}
			if !flushed {
				l.mu.Lock()
				l.needFlush()
				l.mu.Unlock()
				return // try again after the uploads
			}
			next.Members = slices.DeleteFunc(next.Members, func(x core.Member) bool { return x == m.Member })
		}
		l.mu.Lock()
		ok := true
		for _, m := range drop {
			ok = ok && core.MayDrop(l.rec, m, l.flushedLocked())
		}
		if len(next.Members) == 0 && !l.flushedLocked() {
			ok = false
		}
		l.mu.Unlock()
		if !ok || !l.writeRecord(next) {
			return
		}
		l.mu.Lock()
		for _, m := range drop {
			delete(l.failed, m)
		}
		l.mu.Unlock()
		l.log.Warn("fleet followers dropped from the replication group", "dropped", drop, "members", next.Members)
	}
}

// probe checks a member still answers with the disk it was recruited on.
func (l *Log) probe(m member) bool {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.AppendTimeout)
	defer cancel()
	disk, err := l.hello(ctx, m.addr)
	return err == nil && disk == m.Disk
}

func (l *Log) hello(ctx context.Context, addr string) (string, error) {
	status, data, err := l.post(ctx, addr, PathHello, url.Values{}, nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("hello: %d %s", status, bytes.TrimSpace(data))
	}
	var h struct {
		Disk string `json:"disk"`
	}
	if err := json.Unmarshal(data, &h); err != nil || h.Disk == "" {
		return "", fmt.Errorf("hello: bad answer %q", data)
	}
	return h.Disk, nil
}

// writeRecord creates or CASes the record to next; a refused or unknown
// write is settled by a read, and a record that left open (a successor is
// recovering this session) fences the fleet proofs for good. Call with
// recMu held.
func (l *Log) writeRecord(next core.LogRecord) bool {
	l.mu.Lock()
	create, etag := !l.exists, l.etag
	l.pending = &next
	l.mu.Unlock()
	key := core.LogKey(l.cfg.Node, l.cfg.Session)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cond := bucket.IfMatch(etag)
	if create {
		cond = bucket.IfAbsent()
	}
	obj, err := l.cfg.Store.Put(ctx, key, core.Encode(next), cond)
	outcome := bucket.OutcomeOf(err)
	if outcome == bucket.Applied {
		l.mu.Lock()
		l.rec, l.etag, l.exists, l.pending = next, obj.ETag, true, nil
		l.recordChangedLocked()
		l.mu.Unlock()
		return true
	}
	if outcome != bucket.Ambiguous && outcome != bucket.Rejected {
		l.mu.Lock()
		l.pending = nil // not applied
		l.mu.Unlock()
		return false
	}
	// Settle by reading; until then the pending record still counts.
	for try := 0; try < 5; try++ {
		data, o, err := l.cfg.Store.Get(ctx, key)
		if bucket.OutcomeOf(err) == bucket.NotFound {
			l.mu.Lock()
			l.pending = nil
			l.mu.Unlock()
			return false
		}
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		rec, derr := core.DecodeLogRecord(data)
		l.mu.Lock()
		l.pending = nil
		if derr != nil || rec.State != core.LogOpen {
			l.fenced = true
			l.log.Warn("node log record is no longer open: fleet proofs stop for this session", "key", key, "state", rec.State, "by", rec.By)
		}
		if derr == nil {
			l.rec, l.etag, l.exists = rec, o.ETag, true
		}
		l.recordChangedLocked()
		applied := derr == nil && slices.Equal(rec.Members, next.Members) && rec.State == core.LogOpen && rec.PackFloor == next.PackFloor
		l.mu.Unlock()
		return applied
	}
	// Unknown: keep the pending record counting (it may have landed)
	// until a later write settles it.
	l.mu.Lock()
	l.fenced = true // we cannot know the members: no more fleet proofs
	l.mu.Unlock()
	return false
}

func (l *Log) recruitLoop() {
	if l.cfg.Resume {
		l.adopt()
	}
	// Alone (no other live node seen), the loop lists leases only when
	// kicked: a node that starts says hello to the live nodes it finds.
	// With peers but no new candidate, the listing backs off from Recruit
	// to 30 s; a member failing or a kick starts it again from Recruit.
	wait := l.cfg.Recruit
	t := time.NewTimer(wait)
	defer t.Stop()
	first := true
	for {
		l.checkMembers()
		grew := l.recruit()
		if first {
			close(l.scanned)
			first = false
		}
		l.mu.Lock()
		alone := l.peers == 0 && len(l.rec.Members) == 0
		short := len(l.rec.Members) < 2 || len(l.failed) > 0
		l.mu.Unlock()
		switch {
		case grew || !short:
			wait = l.cfg.Recruit
		default:
			wait = min(2*wait, max(30*time.Second, l.cfg.Recruit))
		}
		var tc <-chan time.Time
		if !alone {
			t.Reset(wait)
			tc = t.C
		}
		select {
		case <-l.stop:
			return
		case <-tc:
		case <-l.wake:
			wait = l.cfg.Recruit
		}
	}
}

// checkMembers probes every member between writes: one that answers with
// another disk (it restarted without its state) or not at all is failed,
// so an idle group heals too.
func (l *Log) checkMembers() {
	l.mu.Lock()
	var ms []member
	for _, m := range l.rec.Members {
		if !l.failed[m] {
			ms = append(ms, member{m, l.addrs[m.Node]})
		}
	}
	l.mu.Unlock()
	for _, m := range ms {
		if !l.probe(m) {
			l.memberFailed(m.Member)
		}
	}
}

// recruit adds one follower from the live leases when the group has fewer
// than two: catch it up on every segment the bucket may lack, then CAS the
// record to name it. It reports whether one joined.
func (l *Log) recruit() bool {
	l.recMu.Lock()
	defer l.recMu.Unlock()
	l.mu.Lock()
	full := len(l.rec.Members) >= 2 || l.fenced
	have := map[string]bool{l.cfg.Node: true}
	for _, m := range l.rec.Members {
		have[m.Node] = true
	}
	l.mu.Unlock()
	if full {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leases, err := fleet.ListLeases(ctx, l.cfg.Store)
	if err != nil {
		return false
	}
	now := l.cfg.Now().UnixMilli()
	var cands []core.Lease
	l.mu.Lock()
	for _, li := range leases {
		if li.Err == "" && have[li.Lease.Node] && li.Lease.Node != l.cfg.Node && li.Lease.Advertise != "" {
			l.addrs[li.Lease.Node] = li.Lease.Advertise // a member restarted elsewhere, or adopted by a settle read
		}
	}
	l.mu.Unlock()
	peers := 0
	for _, li := range leases {
		le := li.Lease
		if li.Err == "" && le.Kind == core.KindNode && le.Node != l.cfg.Node && le.Expires > now && le.Advertise != "" {
			peers++
			if !have[le.Node] {
				cands = append(cands, le)
			}
		}
	}
	l.mu.Lock()
	l.peers = peers
	l.mu.Unlock()
	sort.Slice(cands, func(i, j int) bool { return cands[i].Node < cands[j].Node })
	for _, c := range cands {
		disk, err := l.hello(ctx, c.Advertise)
		if err != nil {
			continue
		}
		m := member{core.Member{Node: c.Node, Disk: disk}, c.Advertise}
		l.mu.Lock()
		l.joining = &m
		var catchUp []cell.Segment
		for _, t := range l.tails {
			for _, s := range t.segs {
				s.After = max(s.After, t.inBucket())
				catchUp = append(catchUp, s)
			}
		}
		l.mu.Unlock()
		ok := l.sendAll(ctx, []member{m}, catchUp)[m.Member]
		l.mu.Lock()
		next := core.LogRecord{Node: l.cfg.Node, Session: l.cfg.Session, State: core.LogOpen, Members: append(slices.Clone(l.rec.Members), m.Member), PackFloor: l.rec.PackFloor}
		l.mu.Unlock()
		l.mu.Lock()
		l.addrs[m.Node] = m.addr
		l.mu.Unlock()
		if ok && l.writeRecord(next) {
			l.mu.Lock()
			l.joining = nil
			l.mu.Unlock()
			l.log.Info("fleet follower joined the replication group", "member", m.Node, "disk", m.Disk)
			return true
		}
		l.mu.Lock()
		l.joining = nil
		l.mu.Unlock()
	}
	return false
}
