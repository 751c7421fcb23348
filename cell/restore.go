package cell

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/celldgo/celld/bucket"
	"github.com/superfly/ltx"
)

// ErrBrokenHistory is wrapped by every Restore error that a retry will not
// fix: a gap in the TXIDs, or an object that is corrupt or does not follow
// the one before it. The message names the object or the gap. (Store errors
// are passed on as they are; an unreachable store is not a broken history.)
var ErrBrokenHistory = errors.New("cell history is broken")

// RestoreInfo says where a restore left the local file.
type RestoreInfo struct {
	Epoch    uint64 // the newest epoch with data (0: the cell has no history)
	TXID     uint64 // the last transaction applied (0: none)
	Checksum uint64 // the LTX database checksum at TXID (0 when TXID is 0)
	Objects  int    // LTX objects read
	// Chain names the objects applied, in order (full keys): a replicator
	// continuing from here extends it, and writes it into the head record
	// when its epoch ends (Seal).
	Chain []string
	// state is the restored file's page checksums, sparing NewReplicator
	// a second pass over the file (nil: it computes them).
	state *dbState
}

// restoreWindow is how many LTX objects a restore fetches ahead of the one
// it applies.
const restoreWindow = 4

// segment is one LTX object of a cell, as its key names it.
type segment struct {
	key      string
	epoch    uint64
	min, max uint64
}

// Restore rebuilds the SQLite file of cell at path from the bucket: the
// newest epoch prefix with data, chained back through the epochs before it
// to a full snapshot, every object applied in TXID order with its checksums
// verified. The file is written beside path and renamed over it, and a
// stale -wal and -shm are removed, so cell.Open then sees exactly the
// restored state. A cell with no history leaves no file at path.
//
// The chain is the one with the fewest objects: the newest snapshot and
// the segments after it. Within an epoch every TXID up to the newest must
// be covered; a predecessor epoch must end exactly where its successor
// began (a fenced owner's later writes there are not part of the lineage).
// A gap, or an object that is missing, corrupt or does not follow the one
// before it, stops the restore with an error (wrapping ErrBrokenHistory)
// that names it: a restore never returns a shorter history.
func Restore(ctx context.Context, store bucket.Store, cell, path string) (RestoreInfo, error) {
	chain, err := planChain(ctx, store, cell)
	if err != nil {
		return RestoreInfo{}, fmt.Errorf("restore cell %s: %w", cell, err)
	}
	if len(chain) == 0 {
		if err := removeDB(path); err != nil {
			return RestoreInfo{}, fmt.Errorf("restore cell %s: %w", cell, err)
		}
		return RestoreInfo{}, nil
	}
	return writeRestored(ctx, cell, path, chain, newChainFetch(ctx, store, chain), 0)
}

// writeRestored applies chain, read through f, to a file beside path and
// renames it over path. A non-zero checksum is what the database must have
// at the end (the head record's promise).
func writeRestored(ctx context.Context, cell, path string, chain []segment, f *chainFetch, checksum uint64) (RestoreInfo, error) {
	tmp, st, err := applyToTemp(ctx, path, chain, f, checksum)
	if err == nil {
		err = install(tmp, path)
	}
	if err != nil {
		return RestoreInfo{}, fmt.Errorf("restore cell %s: %w", cell, err)
	}
	return restoredInfo(chain, st), nil
}

// applyToTemp applies chain, read through f, to a new file beside path and
// returns its name; on error it leaves no file.
//
// The file is not fsynced: it is a copy of the bucket that every
// activation rebuilds, and whatever opens it without a restore (a
// preserved cell resuming) checks it against the checksum of its position
// first (NewReplicator), so a file torn by a power loss is refused, never
// served. An fsync of a 1 MB file cost as much as a round trip to the
// bucket.
func applyToTemp(ctx context.Context, path string, chain []segment, f *chainFetch, checksum uint64) (string, *dbState, error) {
	defer f.stop()
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".restore-*")
	if err != nil {
		return "", nil, err
	}
	st, err := applyChain(ctx, chain, f, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && checksum != 0 && uint64(st.checksum()) != checksum {
		err = fmt.Errorf("%w: the database has checksum %s after %s, the head record says %016x",
			ErrBrokenHistory, st.checksum(), chain[len(chain)-1].key, checksum)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", nil, err
	}
	return tmp.Name(), &st, nil
}

// install replaces the database at path (and its -wal and -shm) with the
// restored file tmp.
func install(tmp, path string) error {
	if err := removeDB(path); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func restoredInfo(chain []segment, st *dbState) RestoreInfo {
	last := chain[len(chain)-1]
	info := RestoreInfo{Epoch: last.epoch, TXID: last.max, Checksum: uint64(st.checksum()), Objects: len(chain), state: st}
	for _, s := range chain {
		info.Chain = append(info.Chain, s.key)
	}
	return info
}

// parseSegmentKey parses the key of an LTX object under prefix
// ("e<epoch:016x>/<min:016x>-<max:016x>.ltx" after it). ok is false for
// any other key.
func parseSegmentKey(prefix, key string) (seg segment, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return segment{}, false
	}
	dir, name, ok := strings.Cut(rest, "/")
	if !ok || len(dir) != 17 || dir[0] != 'e' || !strings.HasSuffix(name, ".ltx") {
		return segment{}, false
	}
	epoch, err := strconv.ParseUint(dir[1:], 16, 64)
	if err != nil {
		return segment{}, false
	}
	lo, hi, err := ltx.ParseFilename(name)
	if err != nil {
		return segment{}, false
	}
	return segment{key: key, epoch: epoch, min: uint64(lo), max: uint64(hi)}, true
}

// planRestore picks the objects to apply, in order.
func planRestore(segs []segment) ([]segment, error) {
	byEpoch := map[uint64][]segment{}
	for _, s := range segs {
		byEpoch[s.epoch] = append(byEpoch[s.epoch], s)
	}
	epochs := slices.Sorted(maps.Keys(byEpoch))
	slices.Reverse(epochs)
	if len(epochs) == 0 {
		return nil, nil
	}

	var parts [][]segment // newest epoch first
	// The newest epoch must be complete up to its newest TXID.
	newest := byEpoch[epochs[0]]
	end := slices.MaxFunc(newest, func(a, b segment) int { return cmp.Compare(a.max, b.max) }).max
	path, fromZero, err := chainTo(newest, end)
	if err != nil {
		return nil, err
	}
	parts = append(parts, path)
	rest := epochs[1:]
	for !fromZero {
		// It began where an older epoch ended: find the newest older epoch
		// that reaches exactly there. Epochs between (an owner that wrote
		// only after it was superseded) hold nothing at or before it.
		want := path[0].min - 1
		var firstErr error
		found := false
		for i, e := range rest {
			var upTo []segment
			for _, s := range byEpoch[e] {
				if s.max <= want {
					upTo = append(upTo, s)
				}
			}
			if len(upTo) == 0 {
				continue
			}
			p, z, err := chainTo(upTo, want)
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("%s starts at TXID %d: %w", path[0].key, want+1, err)
				}
				continue
			}
			path, fromZero, found, rest = p, z, true, rest[i+1:]
			break
		}
		if !found {
			if firstErr != nil {
				return nil, firstErr
			}
			return nil, fmt.Errorf("%w: %s starts at TXID %d, but no older epoch holds TXIDs up to %d and no snapshot precedes it",
				ErrBrokenHistory, path[0].key, path[0].min, want)
		}
		parts = append(parts, path)
	}
	var chain []segment
	for i := len(parts) - 1; i >= 0; i-- {
		chain = append(chain, parts[i]...)
	}
	return chain, nil
}

// chainTo finds the shortest run of segments of one epoch, each starting
// right after the one before, that ends at TXID end. It starts from
// nothing (a snapshot, minTXID 1) if it can; otherwise from where the
// epoch's first incremental segment starts, and fromZero is false.
func chainTo(segs []segment, end uint64) (path []segment, fromZero bool, err error) {
	segs = slices.Clone(segs)
	slices.SortFunc(segs, func(a, b segment) int {
		return cmp.Or(cmp.Compare(a.max, b.max), cmp.Compare(a.min, b.min))
	})
	type node struct {
		cost int
		zero bool // reached from TXID 0
		via  int  // index of the segment ending here; -1 at a start
	}
	better := func(a, b node) bool {
		if a.zero != b.zero {
			return a.zero
		}
		return a.cost < b.cost
	}
	reach := map[uint64]node{0: {zero: true, via: -1}}
	// The epoch began where its lowest incremental segment starts, restored
	// from an older epoch — unless it holds a snapshot from before that
	// point: then it began from nothing, and what lies between is a gap.
	entry, firstSnap := uint64(0), uint64(0)
	for _, s := range segs {
		if s.min > 1 && (entry == 0 || s.min-1 < entry) {
			entry = s.min - 1
		}
		if s.min == 1 && (firstSnap == 0 || s.max < firstSnap) {
			firstSnap = s.max
		}
	}
	if entry > 0 && (firstSnap == 0 || firstSnap >= entry) {
		reach[entry] = node{via: -1}
	}
	for i, s := range segs {
		from, ok := reach[s.min-1]
		if !ok {
			continue
		}
		n := node{cost: from.cost + 1, zero: from.zero, via: i}
		if cur, ok := reach[s.max]; !ok || better(n, cur) {
			reach[s.max] = n
		}
	}
	n, ok := reach[end]
	if !ok {
		return nil, false, gapError(segs, reach, end)
	}
	for n.via >= 0 {
		s := segs[n.via]
		path = append(path, s)
		n = reach[s.min-1]
	}
	slices.Reverse(path)
	return path, n.zero, nil
}

// gapError names the first TXIDs no chain of segs covers on the way to
// end, given the TXIDs reached.
func gapError[T any](segs []segment, reach map[uint64]T, end uint64) error {
	var last uint64 // the highest TXID reached below end
	for txid := range reach {
		if txid < end {
			last = max(last, txid)
		}
	}
	var after, before string
	next := end + 1 // the first TXID held again after the gap
	for _, s := range segs {
		if s.max == last {
			after = s.key
		}
		if s.min > last+1 && s.min < next {
			next, before = s.min, s.key
		}
	}
	where := ""
	if after != "" {
		where += " after " + after
	}
	if before != "" {
		where += ", before " + before
	}
	if next > end || next-1 == last+1 {
		return fmt.Errorf("%w: no object holds TXID %d%s", ErrBrokenHistory, last+1, where)
	}
	return fmt.Errorf("%w: no object holds TXIDs %d-%d%s", ErrBrokenHistory, last+1, next-1, where)
}

// chainFetch reads the objects of a chain, restoreWindow ahead of the
// one being applied.
type chainFetch struct {
	ctx     context.Context
	cancel  context.CancelFunc
	store   bucket.Store
	chain   []segment
	mu      sync.Mutex
	results []chan fetched
	taken   int // results handed to get
}

// fetched is one object of the chain, open for reading.
type fetched struct {
	body io.ReadCloser
	err  error
}

// newChainFetch starts reading the first objects of chain.
func newChainFetch(ctx context.Context, store bucket.Store, chain []segment) *chainFetch {
	ctx, cancel := context.WithCancel(ctx)
	f := &chainFetch{ctx: ctx, cancel: cancel, store: store, chain: chain}
	f.ahead(restoreWindow)
	return f
}

// ahead starts the reads of every object before index n not yet started.
func (f *chainFetch) ahead(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.results); i < min(n, len(f.chain)); i++ {
		ch := make(chan fetched, 1)
		f.results = append(f.results, ch)
		go func() {
			body, _, err := bucket.OpenStream(f.ctx, f.store, f.chain[i].key)
			ch <- fetched{body, err}
		}()
	}
}

// stop ends the reads, and closes every object opened but not taken.
func (f *chainFetch) stop() {
	f.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.results[f.taken:] {
		go func() {
			if r := <-ch; r.body != nil {
				r.body.Close()
			}
		}()
	}
	f.taken = len(f.results)
}

// get waits for object i (taken in order) and starts the next read.
func (f *chainFetch) get(i int) fetched {
	f.ahead(i + 1)
	f.mu.Lock()
	ch := f.results[i]
	f.taken = i + 1
	f.mu.Unlock()
	r := <-ch
	f.ahead(i + 1 + restoreWindow)
	return r
}

// readErr remembers the first error of r other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// applyChain applies chain, read through f, in order to file w.
func applyChain(ctx context.Context, chain []segment, f *chainFetch, w *os.File) (dbState, error) {
	var st dbState
	for i, seg := range chain {
		if err := ctx.Err(); err != nil {
			return st, context.Cause(ctx)
		}
		r := f.get(i)
		if r.err != nil {
			if errors.Is(r.err, bucket.ErrNotFound) {
				return st, fmt.Errorf("%w: %s is listed but missing: %w", ErrBrokenHistory, seg.key, r.err)
			}
			return st, fmt.Errorf("read %s: %w", seg.key, r.err)
		}
		body := &readErr{r: r.body}
		err := applyLTX(seg, bufio.NewReaderSize(body, 256<<10), w, &st)
		r.body.Close()
		if body.err != nil {
			// The object could not be read to its end: not a broken
			// history.
			return st, fmt.Errorf("read %s: %w", seg.key, body.err)
		}
		if err != nil {
			if errors.Is(err, errBadLTX) {
				err = fmt.Errorf("%w: %w", ErrBrokenHistory, err)
			}
			return st, fmt.Errorf("apply %s: %w", seg.key, err)
		}
	}
	return st, nil
}

// removeDB removes a database file and its WAL and shared-memory files.
func removeDB(path string) error {
	for _, p := range []string{path + "-wal", path + "-shm", path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
