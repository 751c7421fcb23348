package fleetlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// Log packs (docs/bucket-layout.md): the write-behind across cells. Every
// upload window (Config.Delay) the owner writes the segments the bucket
// lacks, of all its cells, as one object core.PackKey(node, session, seq),
// seq 1, 2, 3, … one at a time; a failed write is retried with the same
// bytes (30 s, doubling to 300 s, or at once when the group needs it).
// Once a pack is in the bucket its segments are dropped here (but for
// their TXIDs) and on the members. Each cell's prefix gets its segments
// later, merged (cell.Fleet.Delay); a pack whose segments the prefixes all
// hold is deleted, below the record's PackFloor, which is raised first.
//
// A pack is
//
//	"CELLDPK1" | frames (wire.go) | end mark
//
// so a reader can tell a whole pack from a cut one.
const packMagic = "CELLDPK1"

// maxPackBytes bounds one pack; more waiting makes more packs.
const maxPackBytes = 32 << 20

// floorEvery bounds how often the record is rewritten to raise the floor.
const floorEvery = 5 * time.Second

func encodePack(segs []cell.Segment) []byte {
	var buf bytes.Buffer
	buf.WriteString(packMagic)
	for _, s := range segs {
		writeFrame(&buf, s)
	}
	writeEnd(&buf)
	return buf.Bytes()
}

// readPack calls fn for each segment of a pack.
func readPack(r io.Reader, fn func(cell.Segment) error) error {
	magic := make([]byte, len(packMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != packMagic {
		return errors.New("read log pack: not a log pack")
	}
	if err := readFrames(r, fn); err != nil {
		return fmt.Errorf("read log pack: %w", err)
	}
	return nil
}

// packLoop writes a pack every Delay (at once when kicked).
func (l *Log) packLoop() {
	t := time.NewTicker(l.cfg.Delay)
	defer t.Stop()
	backoff := time.Duration(0)
	var retryAt time.Time
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.packKick:
			retryAt = time.Time{} // the group needs it: no backoff
		}
		if time.Now().Before(retryAt) {
			continue
		}
		if err := l.writePacks(); err != nil {
			backoff = min(max(2*backoff, 30*time.Second), 300*time.Second)
			retryAt = time.Now().Add(backoff)
			l.log.Warn("write log pack failed; the members keep the segments meanwhile", "err", err, "retry_in", backoff)
			l.mu.Lock()
			l.packFailing = true
			l.flushNow() // the cells' own uploads stand in
			l.mu.Unlock()
			continue
		}
		backoff = 0
		l.mu.Lock()
		l.packFailing = false
		l.mu.Unlock()
		l.raiseFloor()
	}
}

// kickPack asks for a pack now. Call with or without l.mu.
func (l *Log) kickPack() {
	select {
	case l.packKick <- struct{}{}:
	default:
	}
}

// writePacks writes the pending pack (a retry: the same bytes), then a
// pack of everything the bucket lacks (more than one only while each is
// full: the rest waits for the next window, so a busy node still writes
// about one pack per window).
func (l *Log) writePacks() error {
	for fresh := 0; ; {
		l.mu.Lock()
		if l.packing == nil {
			if !l.exists || l.fenced || fresh > 0 && !l.lastFull {
				l.mu.Unlock()
				return nil
			}
			l.packing = l.nextPackLocked()
			fresh++
		}
		p := l.packing
		l.mu.Unlock()
		if p == nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := l.cfg.Store.Put(ctx, core.PackKey(l.cfg.Node, l.cfg.Session, p.seq), p.data, bucket.Cond{})
		cancel()
		if err != nil {
			return fmt.Errorf("put log pack %d: %w", p.seq, err)
		}
		l.packed(p)
	}
}

type pack struct {
	seq     uint64
	data    []byte
	through map[tailID]uint64 // each cell epoch's last TXID in it
	segs    int
}

// nextPackLocked gathers the next pack (nil: nothing to pack). Call with
// l.mu held.
func (l *Log) nextPackLocked() *pack {
	ids := make([]tailID, 0, len(l.tails))
	for id, t := range l.tails {
		if len(t.segs) > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].cell != ids[j].cell {
			return ids[i].cell < ids[j].cell
		}
		return ids[i].epoch < ids[j].epoch
	})
	p := &pack{seq: l.nextPack, through: map[tailID]uint64{}}
	var segs []cell.Segment
	size := 0
	l.lastFull = false
	for _, id := range ids {
		t := l.tails[id]
		reach := t.inBucket()
		for _, s := range t.segs {
			if size > 0 && size+len(s.Data) > maxPackBytes {
				l.lastFull = true // the rest goes in the next pack, at once
				break
			}
			if s.Min > reach+1 {
				break // a batch before it is on its way to the prefix: never a pack with a gap
			}
			reach = max(reach, s.Max)
			segs = append(segs, s)
			size += len(s.Data)
			p.through[id] = max(p.through[id], s.Max)
		}
	}
	p.data, p.segs = encodePack(segs), len(segs)
	return p
}

// packed: pack p is in the bucket. Drop its segments here, then on the
// members (only now may they).
func (l *Log) packed(p *pack) {
	l.mu.Lock()
	l.packing = nil
	l.nextPack = p.seq + 1
	l.live[p.seq] = p.through
	l.packs++
	l.packBytes += int64(len(p.data))
	var trims []trim
	for id, through := range p.through {
		t := l.tails[id]
		if t == nil {
			continue
		}
		t.packed = max(t.packed, through)
		t.dropThrough(max(t.packed, t.uploaded))
		if through > t.trimmed {
			t.trimmed = through
			trims = append(trims, trim{Cell: id.cell, Epoch: id.epoch, Through: through})
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

// trimMembers tells every target the bucket holds trims.
func (l *Log) trimMembers(targets []member, trims []trim) {
	if len(trims) == 0 {
		return
	}
	body, _ := json.Marshal(trims)
	for _, m := range targets {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), l.cfg.AppendTimeout)
			defer cancel()
			l.post(ctx, m.addr, PathTrim, url.Values{"session": {l.cfg.Session}}, body)
		}()
	}
}

// raiseFloor moves the record's floor past the packs whose segments the
// cells' prefixes all hold, then deletes them.
func (l *Log) raiseFloor() {
	l.mu.Lock()
	floor := l.nextPack
	for seq, through := range l.live {
		if seq >= floor {
			continue
		}
		for id, mx := range through {
			if l.covered[id] < mx {
				floor = seq
				break
			}
		}
	}
	due := floor > l.rec.Floor() && time.Since(l.floorAt) >= floorEvery && l.exists && !l.fenced
	l.mu.Unlock()
	if due {
		l.recMu.Lock()
		l.mu.Lock()
		next := l.rec
		next.PackFloor = floor
		l.mu.Unlock()
		ok := l.writeRecord(next)
		l.recMu.Unlock()
		l.mu.Lock()
		l.floorAt = time.Now()
		if ok {
			for seq := range l.live {
				if seq < floor {
					delete(l.live, seq)
					l.doomed = append(l.doomed, seq)
				}
			}
			l.pruneCoveredLocked()
		}
		l.mu.Unlock()
	}
	l.mu.Lock()
	start := len(l.doomed) > 0 && !l.deleting
	if start {
		l.deleting = true
	}
	l.mu.Unlock()
	if start {
		go l.deleteDoomed() // never holds up the next pack
	}
}

// deleteDoomed deletes the packs below the floor, eight at a time; one
// that fails is tried again after the next floor check.
func (l *Log) deleteDoomed() {
	l.mu.Lock()
	doomed := l.doomed
	l.doomed = nil
	l.mu.Unlock()
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, seq := range doomed {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := l.cfg.Store.Delete(ctx, core.PackKey(l.cfg.Node, l.cfg.Session, seq))
			cancel()
			if err != nil {
				l.mu.Lock()
				l.doomed = append(l.doomed, seq)
				l.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	l.mu.Lock()
	l.deleting = false
	l.mu.Unlock()
}

// pruneCoveredLocked forgets prefix watermarks no live pack needs. Call
// with l.mu held.
func (l *Log) pruneCoveredLocked() {
	need := map[tailID]bool{}
	for _, through := range l.live {
		for id := range through {
			need[id] = true
		}
	}
	if l.packing != nil {
		for id := range l.packing.through {
			need[id] = true
		}
	}
	for id := range l.covered {
		if !need[id] && l.tails[id] == nil {
			delete(l.covered, id)
		}
	}
}

// packUploads uploads the segments of a session's log packs to their
// cells' prefixes for the recovery gate, up to 16 at a time. Of a cell
// epoch's snapshots (segments from TXID 1: small cells send their whole
// database each time) only the newest is uploaded, since a restore starts
// from an epoch's newest snapshot.
type packUploads struct {
	ctx   context.Context
	store bucket.Store
	sem   chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
	n     int
	snaps map[tailID]cell.Segment
	held  int
}

func newPackUploads(ctx context.Context, store bucket.Store) *packUploads {
	return &packUploads{ctx: ctx, store: store, sem: make(chan struct{}, 16), snaps: map[tailID]cell.Segment{}}
}

func (u *packUploads) add(s cell.Segment) {
	if s.Min == 1 {
		id := tailID{s.Cell, s.Epoch}
		u.mu.Lock()
		cur, ok := u.snaps[id]
		if !ok || s.Max > cur.Max {
			u.held += len(s.Data) - len(cur.Data)
			u.snaps[id] = s
		}
		over := u.held > 64<<20
		u.mu.Unlock()
		if over {
			u.flushSnaps() // bounded memory: an older snapshot too is harmless
		}
		return
	}
	u.put(s)
}

func (u *packUploads) put(s cell.Segment) {
	u.sem <- struct{}{}
	u.wg.Add(1)
	go func() {
		defer func() { <-u.sem; u.wg.Done() }()
		err := putRecovered(u.ctx, u.store, s)
		u.mu.Lock()
		if err != nil && u.err == nil {
			u.err = err
		}
		u.n++
		u.mu.Unlock()
	}()
}

func (u *packUploads) flushSnaps() {
	u.mu.Lock()
	snaps := u.snaps
	u.snaps, u.held = map[tailID]cell.Segment{}, 0
	u.mu.Unlock()
	for _, s := range snaps {
		u.put(s)
	}
}

// wait uploads the held snapshots (unless the attempt failed: the next
// one uploads them) and waits for every upload.
func (u *packUploads) wait(failed bool) (int, error) {
	if !failed {
		u.flushSnaps()
	}
	u.wg.Wait()
	return u.n, u.err
}

// putRecovered uploads one recovered segment to its cell's epoch prefix.
func putRecovered(ctx context.Context, store bucket.Store, s cell.Segment) error {
	key := cell.LTXKey(s.Cell, s.Epoch, s.Min, s.Max)
	for try := 0; ; try++ {
		uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := store.Put(uctx, key, s.Data, bucket.Cond{})
		cancel()
		if err == nil {
			return nil
		}
		if try == 4 || ctx.Err() != nil {
			return fmt.Errorf("upload recovered %s: %w", key, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// recoverPacks reads a session's packs from seq up to the first the
// bucket reports missing, one at a time, uploading their segments. A
// failed read is an error, never a missing pack.
func recoverPacks(ctx context.Context, store bucket.Store, node, session string, seq uint64) (packs, segs int, err error) {
	u := newPackUploads(ctx, store)
	for ; ; seq++ {
		key := core.PackKey(node, session, seq)
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		data, _, gerr := store.Get(cctx, key)
		cancel()
		if bucket.OutcomeOf(gerr) == bucket.NotFound {
			break
		}
		if gerr != nil {
			err = fmt.Errorf("read log pack %s: %w", key, gerr)
			break
		}
		if err = readPack(bytes.NewReader(data), func(s cell.Segment) error { u.add(s); return nil }); err != nil {
			err = fmt.Errorf("%s: %w", key, err)
			break
		}
		packs++
	}
	n, uerr := u.wait(err != nil)
	return packs, n, errors.Join(err, uerr)
}

// SealClean ends a session that released every cell cleanly (a drain):
// no more fleet proofs; if the cells' prefixes hold every segment it
// acknowledged, its record is CASed to sealed (a successor then needs no
// recovery), its members forget it, and its packs are deleted. Otherwise
// the record stays open for the successor's recovery gate. It reports
// whether the record was sealed.
func (l *Log) SealClean(ctx context.Context) bool {
	l.Close()
	l.recMu.Lock()
	defer l.recMu.Unlock()
	l.mu.Lock()
	l.fenced = true // from here on every proof is the bucket's
	clean := l.exists
	for _, t := range l.tails {
		if t.proven > t.uploaded {
			clean = false
		}
	}
	next := l.rec
	next.State, next.By = core.LogSealed, l.cfg.Session
	targets := l.targets()
	seqs := make([]uint64, 0, len(l.live))
	for seq := range l.live {
		seqs = append(seqs, seq)
	}
	etag := l.etag
	l.mu.Unlock()
	if !clean {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := l.cfg.Store.Put(cctx, core.LogKey(l.cfg.Node, l.cfg.Session), core.Encode(next), bucket.IfMatch(etag))
	cancel()
	if err != nil {
		l.log.Warn("seal node log record on drain failed; a successor's recovery gate settles it", "err", err)
		return false
	}
	forgetMembers(ctx, l.post, l.cfg.Session, targets)
	for _, seq := range seqs {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		l.cfg.Store.Delete(dctx, core.PackKey(l.cfg.Node, l.cfg.Session, seq))
		cancel()
	}
	l.log.Info("node log record sealed on drain", "session", l.cfg.Session, "members", len(targets))
	return true
}

// forgetMembers tells members a sealed session's tails are in the bucket.
func forgetMembers(ctx context.Context, post func(context.Context, string, string, url.Values, []byte) (int, []byte, error), session string, ms []member) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			post(cctx, m.addr, PathForget, url.Values{"session": {session}}, nil)
		}()
	}
	wg.Wait()
}

// adopt takes over this session's record as a preserve drain left it (the
// process resumed the session): open, its members stay the group; left
// open by no one, fleet proofs stop.
func (l *Log) adopt() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	data, obj, err := l.cfg.Store.Get(ctx, core.LogKey(l.cfg.Node, l.cfg.Session))
	if err != nil {
		return // absent (no fleet acknowledgement yet) or unreadable: the first write settles it
	}
	rec, err := core.DecodeLogRecord(data)
	addrs := map[string]string{}
	if leases, lerr := fleet.ListLeases(ctx, l.cfg.Store); lerr == nil {
		for _, li := range leases {
			if li.Err == "" && li.Lease.Advertise != "" {
				addrs[li.Lease.Node] = li.Lease.Advertise
			}
		}
	}
	l.recMu.Lock()
	defer l.recMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || rec.State != core.LogOpen {
		l.fenced = true
		return
	}
	l.rec, l.etag, l.exists = rec, obj.ETag, true
	for _, m := range rec.Members {
		l.addrs[m.Node] = addrs[m.Node]
	}
	l.nextPack = rec.Floor() // packs of the previous process are covered (it flushed every cell); new ones follow
	l.log.Info("resumed session's replication group adopted", "members", rec.Members)
}
