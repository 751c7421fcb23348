package cell

import (
	"maps"

	"github.com/superfly/ltx"
)

// Compaction keeps a restore short without rewriting the whole database
// every few writes.
//
// A small database (up to InlineSnapshotBytes) simply gets a snapshot in
// place of every SnapshotSegments-th segment: it costs one upload, like
// the segment it replaces.
//
// A larger one is compacted in levels. Every MergeSegments segments are
// merged into one LTX file covering their TXIDs (level 1); every
// MergeSegments level-1 files into one of level 2, and so on up to
// mergeLevels. A merge holds each page its range wrote once, as it is
// now, so it costs what those segments wrote (less what they rewrote),
// not the database. A snapshot is written only when it costs no more than
// what was written since the last one — the pages captured since then
// reach the database's size, or a merge would hold half its pages — or
// when the top level is full and what was written is at least an eighth
// of the database. A restore then applies the newest snapshot and at most
// MergeSegments-1 objects of each level — with the defaults, 19 objects
// for a database written as much as an eighth of its size since its last
// snapshot (more top-level files, one per 4096 segments, for a large one
// written less) — while every page written is uploaded about
// mergeLevels+2 times at most instead of once per snapshot.
//
// Merged files are ordinary LTX objects of the epoch (minTXID > 1, so not
// snapshots); Restore's shortest-chain search picks them where they save
// objects. A merge is built on the cell's goroutine from what the
// replicator already knows — which pages the range wrote, and where each
// one's current image is (the WAL, or the database file when it was not
// written since the last checkpoint) — and uploaded in the background,
// holding off checkpoints like a snapshot does.

// DefaultMergeSegments is ReplicatorConfig.MergeSegments's default.
const DefaultMergeSegments = 4

// mergeLevels is how many levels of merged files there are above the
// segments.
const mergeLevels = 5

// maxTopAmplification: a full top level brings a snapshot only once the
// pages written since the last one reach 1/maxTopAmplification of the
// database; a larger database stacks more top-level files meanwhile (one
// per MergeSegments^(mergeLevels+1) segments), so a snapshot of it never
// costs more than this many times what was written.
const maxTopAmplification = 8

// maxMerging bounds the merges uploading at once. They run beside a
// snapshot (a large one would hold them off for its whole upload, and the
// segments would pile up meanwhile) and beside each other (one merge that
// holds a large transaction must not hold up the small ones after it).
const maxMerging = 3

// level is the open run of one merge level: what the next merged file of
// that level will cover.
type level struct {
	from uint64       // its first TXID
	pre  ltx.Checksum // the database checksum at from-1
	// runs is how many objects of the level below were completed since
	// from (for level 1: segments begun).
	runs int
	// touched holds the pages written since from that no open run of a
	// lower level holds.
	touched map[uint32]struct{}
}

// resetLevels starts the runs of levels 1..n (lv[0..n-1]) at TXID from,
// with the database checksum pre at from-1.
func (r *Replicator) resetLevels(n int, from uint64, pre ltx.Checksum) {
	for i := range min(n, len(r.lv)) {
		r.lv[i] = level{from: from, pre: pre, touched: map[uint32]struct{}{}}
	}
}

// afterSnapshot restarts every level after a snapshot at TXID x.
func (r *Replicator) afterSnapshot(x uint64, post ltx.Checksum) {
	r.resetLevels(len(r.lv), x+1, post)
	r.topRuns = 0
}

// touch records the pages of a captured commit.
func (r *Replicator) touch(frames []walFrame) {
	t := r.lv[0].touched
	for _, f := range frames {
		t[f.pgno] = struct{}{}
	}
}

// levelsFull reports that the top level has as many files as a merge
// would take: the next step up is a snapshot.
func (r *Replicator) levelsFull() bool {
	return r.cfg.MergeSegments > 0 && r.topRuns >= r.cfg.MergeSegments
}

// maybeMerge starts the merge that is due, if any, after the commit just
// captured. It runs on the cell's goroutine.
func (r *Replicator) maybeMerge() {
	f := r.cfg.MergeSegments
	if f <= 0 || r.lv[0].runs < f {
		return
	}
	// The highest level this merge completes a run of.
	k := 0
	for k+1 < len(r.lv) && r.lv[k+1].runs+1 >= f {
		k++
	}
	lv := r.lv[k]
	x := r.captured.Load()
	r.mu.Lock()
	// A bounded number of merges at a time; and what precedes the range must
	// be durable already, so that the merged file makes its end durable
	// the moment it is up. Otherwise try again after a later commit.
	busy := r.merging >= maxMerging || r.err != nil || r.durable+1 < lv.from || lv.from < 2 || lv.from > x
	r.mu.Unlock()
	if busy {
		return
	}
	n := 0
	for i := 0; i <= k; i++ {
		n += len(r.lv[i].touched)
	}
	if 2*int64(n) >= int64(r.state.pages()) {
		// The range rewrote half the database or more (a bulk load, say):
		// a snapshot costs about as much and shortens the chain more. If
		// one is uploading already, merge after all.
		if r.startSnapshot() != nil {
			return
		}
	}
	b := &batch{
		min: lv.from, max: x, pre: lv.pre, post: r.state.checksum(), commit: r.state.pages(),
		pages: map[uint32]pageRef{}, file: map[uint32]ltx.Checksum{},
		merge: true, done: make(chan struct{}),
	}
	for i := 0; i <= k; i++ {
		for pgno := range r.lv[i].touched {
			if pgno > b.commit {
				continue // truncated away since
			}
			if ref, ok := r.walIndex[pgno]; ok {
				b.pages[pgno] = ref
			} else {
				b.file[pgno] = r.state.sums[pgno-1]
			}
		}
	}
	if k+1 < len(r.lv) {
		up := &r.lv[k+1]
		up.runs++
		for i := 0; i <= k; i++ {
			maps.Copy(up.touched, r.lv[i].touched)
		}
	} else {
		r.topRuns++
	}
	r.resetLevels(k+1, x+1, b.post)

	r.mu.Lock()
	defer r.mu.Unlock()
	// The next commit starts a new segment, right after the merged range.
	r.open = nil
	r.merging++
	r.wg.Add(1)
	go r.runSnapshot(b)
}
