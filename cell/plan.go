package cell

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/celldgo/celld/bucket"
)

// Planning a restore without listing the whole history.
//
// A cell's LTX prefix keeps every object ever written unless retention
// prunes it (CELLD_LTX_RETENTION_SECS, off by default): superseded segments,
// merges and snapshots pile up for as long as the cell lives. A history that
// fits one LIST page is planned from that page (planRestore). A longer one
// is searched instead, using only that S3 lists keys in byte order from any
// point (startAfter) and that the key names carry epochs and TXIDs in
// fixed-width hex:
//
//   - the newest epoch with data: a binary search over "the first key at an
//     epoch ≥ x" (one LIST of one key per step);
//   - its newest snapshot: the same over the snapshot names
//     (e…/0000000000000001-<max>.ltx sort by max);
//   - from there, the objects starting right after: one LIST of the names
//     starting at a TXID (a segment and the merges over it), taking the one
//     that reaches furthest, until none starts there; then one LIST to make
//     sure nothing starts further on (a gap is an error, never a shorter
//     history);
//   - an epoch without a snapshot chains back into the newest older epoch
//     that reaches exactly its entry, searched the same way.
//
// The cost is a few dozen LISTs of one page, however long the history.
// Merged objects are laminar (nested or disjoint) and end where segments
// end, so taking the furthest-reaching object at each step gives the
// shortest chain, as planRestore's search does.

// planPage is how many keys the first LIST asks for: a history that fits
// is planned from it whole.
const planPage = bucket.MaxListLimit

// planChain finds the objects a restore of cell applies, in order.
func planChain(ctx context.Context, store bucket.Store, cell string) ([]segment, error) {
	prefix := LTXPrefix(cell)
	page, err := store.List(ctx, prefix, "", planPage)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	if !page.Truncated {
		segs, err := segmentsOf(prefix, page.Objects)
		if err != nil {
			return nil, err
		}
		return planRestore(segs)
	}
	s := &scanner{ctx: ctx, store: store, prefix: prefix}
	return s.plan()
}

// segmentsOf turns a listing into segments, leaving out retired epochs
// and keys that are not LTX objects of an epoch.
func segmentsOf(prefix string, objs []bucket.Object) ([]segment, error) {
	retired := map[string]bool{}
	for _, o := range objs {
		if dir, name, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/"); ok && name == RetiredMarker {
			retired[dir] = true
		}
	}
	var segs []segment
	for _, o := range objs {
		dir, _, _ := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		if retired[dir] {
			continue
		}
		seg, ok := parseSegmentKey(prefix, o.Key)
		if !ok {
			continue
		}
		if seg.min == 0 || seg.min > seg.max {
			return nil, fmt.Errorf("%w: %s: TXID range %d-%d", ErrBrokenHistory, o.Key, seg.min, seg.max)
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// scanner searches one cell's LTX prefix.
type scanner struct {
	ctx    context.Context
	store  bucket.Store
	prefix string
	lists  int // LIST calls made
}

func (s *scanner) list(prefix, startAfter string, limit int) (bucket.Page, error) {
	s.lists++
	p, err := s.store.List(s.ctx, prefix, startAfter, limit)
	if err != nil {
		return bucket.Page{}, fmt.Errorf("list %s: %w", prefix, err)
	}
	return p, nil
}

func hex16(x uint64) string { return fmt.Sprintf("%016x", x) }

func (s *scanner) epochPrefix(e uint64) string { return s.prefix + "e" + hex16(e) + "/" }

// nextEpoch is the smallest epoch ≥ x (x ≥ 1) whose prefix holds a key;
// 0 if none does.
func (s *scanner) nextEpoch(x uint64) (uint64, error) {
	after := ""
	if x > 1 {
		// "e<x-1>0" sorts after every key of epoch x-1 ('0' > '/') and
		// before every key of a later epoch.
		after = s.prefix + "e" + hex16(x-1) + "0"
	}
	p, err := s.list(s.prefix, after, 1)
	if err != nil || len(p.Objects) == 0 {
		return 0, err
	}
	rest := strings.TrimPrefix(p.Objects[0].Key, s.prefix)
	dir, _, ok := strings.Cut(rest, "/")
	if !ok || len(dir) != 17 || dir[0] != 'e' {
		return 0, nil // past the epochs (head.json)
	}
	e, err := strconv.ParseUint(dir[1:], 16, 64)
	if err != nil || e < x {
		return 0, nil
	}
	return e, nil
}

// anyEpoch bounds newestEpoch by nothing.
const anyEpoch = ^uint64(0)

// newestEpoch is the largest epoch ≤ hi (anyEpoch: no bound) whose prefix
// holds a key; 0 if none does.
func (s *scanner) newestEpoch(hi uint64) (uint64, error) {
	if hi == 0 {
		return 0, nil
	}
	lo, err := s.nextEpoch(1)
	if err != nil || lo == 0 || lo > hi {
		return 0, err
	}
	if hi == anyEpoch {
		// Gallop up from lo until nothing lies beyond.
		for step := uint64(1); ; step *= 2 {
			e, err := s.nextEpoch(lo + step)
			if err != nil {
				return 0, err
			}
			if e == 0 {
				hi = lo + step - 1
				break
			}
			lo = e
		}
	}
	// lo holds a key; the answer is the last epoch in [lo, hi] that does.
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		e, err := s.nextEpoch(mid)
		if err != nil {
			return 0, err
		}
		if e != 0 && e <= hi {
			lo = e
		} else {
			hi = mid - 1
		}
	}
	return lo, nil
}

// retired reports that epoch e holds the retired marker.
func (s *scanner) retired(e uint64) (bool, error) {
	p, err := s.list(s.epochPrefix(e)+RetiredMarker, "", 1)
	if err != nil {
		return false, err
	}
	return len(p.Objects) > 0 && p.Objects[0].Key == s.epochPrefix(e)+RetiredMarker, nil
}

// snapName is the name prefix of every snapshot in an epoch.
const snapName = "0000000000000001-"

// nextSnapshot is the snapshot of epoch e with the smallest maxTXID ≥ y
// (y ≥ 1); ok is false if there is none.
func (s *scanner) nextSnapshot(e, y uint64) (seg segment, ok bool, err error) {
	prefix := s.epochPrefix(e) + snapName
	after := ""
	if y > 1 {
		after = prefix + hex16(y-1) + ".ltx"
	}
	p, err := s.list(prefix, after, 1)
	if err != nil || len(p.Objects) == 0 {
		return segment{}, false, err
	}
	seg, ok = parseSegmentKey(s.prefix, p.Objects[0].Key)
	return seg, ok && seg.min == 1, nil
}

// newestSnapshot is the snapshot of epoch e with the largest maxTXID ≤
// want (0: any); ok is false if there is none.
func (s *scanner) newestSnapshot(e, want uint64) (segment, bool, error) {
	best, ok, err := s.nextSnapshot(e, 1)
	if err != nil || !ok || (want > 0 && best.max > want) {
		return segment{}, false, err
	}
	lo, hi := best.max, want
	if hi == 0 {
		for step := uint64(1); ; step *= 2 {
			next, ok, err := s.nextSnapshot(e, lo+step)
			if err != nil {
				return segment{}, false, err
			}
			if !ok {
				hi = lo + step - 1
				break
			}
			best, lo = next, next.max
		}
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		next, ok, err := s.nextSnapshot(e, mid)
		if err != nil {
			return segment{}, false, err
		}
		if ok && next.max <= hi {
			best, lo = next, next.max
		} else {
			hi = mid - 1
		}
	}
	return best, true, nil
}

// startingAt lists the objects of epoch e whose span starts at TXID m.
func (s *scanner) startingAt(e, m uint64) ([]segment, error) {
	p, err := s.list(s.epochPrefix(e)+hex16(m)+"-", "", planPage)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, o := range p.Objects {
		if seg, ok := parseSegmentKey(s.prefix, o.Key); ok && seg.min == m && seg.max >= m {
			segs = append(segs, seg)
		}
	}
	return segs, nil
}

// firstAfter is the first object of epoch e whose span starts after TXID
// m; ok is false if there is none.
func (s *scanner) firstAfter(e, m uint64) (segment, bool, error) {
	// "<m>g" sorts after every name starting at m ('g' > '-' and any hex
	// digit) and before every name starting later.
	p, err := s.list(s.epochPrefix(e), s.epochPrefix(e)+hex16(m)+"g", 1)
	if err != nil || len(p.Objects) == 0 {
		return segment{}, false, err
	}
	seg, ok := parseSegmentKey(s.prefix, p.Objects[0].Key)
	return seg, ok, nil
}

// walk follows epoch e from TXID from (the last one already covered),
// taking at each step the object that starts right after and reaches
// furthest without passing want (0: no bound).
func (s *scanner) walk(e, from, want uint64) ([]segment, error) {
	var path []segment
	for m := from + 1; want == 0 || m <= want; {
		segs, err := s.startingAt(e, m)
		if err != nil {
			return nil, err
		}
		var best *segment
		for i := range segs {
			if (want == 0 || segs[i].max <= want) && (best == nil || segs[i].max > best.max) {
				best = &segs[i]
			}
		}
		if best == nil {
			break
		}
		path = append(path, *best)
		m = best.max + 1
	}
	return path, nil
}

// epochChain is the chain of epoch e up to want (0: its newest TXID): from
// its newest snapshot at most want if it has one (fromZero), otherwise from
// its entry (the TXID before its first incremental object). skip is true
// when the epoch holds nothing at or before want.
func (s *scanner) epochChain(e, want uint64) (path []segment, fromZero, skip bool, err error) {
	snap, hasSnap, err := s.newestSnapshot(e, want)
	if err != nil {
		return nil, false, false, err
	}
	from := uint64(0)
	if hasSnap {
		path, from, fromZero = []segment{snap}, snap.max, true
	} else {
		first, ok, err := s.firstAfter(e, 1)
		if err != nil {
			return nil, false, false, err
		}
		if !ok || (want > 0 && first.min > want) {
			return nil, false, true, nil
		}
		from = first.min - 1
	}
	rest, err := s.walk(e, from, want)
	if err != nil {
		return nil, false, false, err
	}
	path = append(path, rest...)
	end := from
	if len(path) > 0 {
		end = path[len(path)-1].max
	}
	if want > 0 {
		if end != want {
			return nil, false, false, fmt.Errorf("%w: epoch %d reaches TXID %d, not %d (nothing in %s starts at TXID %d)",
				ErrBrokenHistory, e, end, want, s.epochPrefix(e), end+1)
		}
		return path, fromZero, false, nil
	}
	if len(path) == 0 {
		return nil, false, true, nil
	}
	// Nothing may start further on: that would be a gap.
	if next, ok, err := s.firstAfter(e, end+1); err != nil {
		return nil, false, false, err
	} else if ok {
		return nil, false, false, fmt.Errorf("%w: no object holds TXIDs %d-%d, after %s, before %s",
			ErrBrokenHistory, end+1, next.min-1, path[len(path)-1].key, next.key)
	}
	return path, fromZero, false, nil
}

// plan is planRestore's answer, found by searching.
func (s *scanner) plan() ([]segment, error) {
	var parts [][]segment // newest epoch first
	var want uint64       // 0 for the newest epoch: its own end
	hi := anyEpoch
	var firstErr error
	for {
		e, err := s.newestEpoch(hi)
		if err != nil {
			return nil, err
		}
		if e == 0 {
			if want == 0 {
				return nil, nil // no history
			}
			if firstErr != nil {
				return nil, firstErr
			}
			return nil, fmt.Errorf("%w: %s starts at TXID %d, but no older epoch holds TXIDs up to %d and no snapshot precedes it",
				ErrBrokenHistory, parts[len(parts)-1][0].key, want+1, want)
		}
		hi = e - 1
		if gone, err := s.retired(e); err != nil {
			return nil, err
		} else if gone {
			continue
		}
		path, fromZero, skip, err := s.epochChain(e, want)
		if err != nil {
			if want == 0 || !errors.Is(err, ErrBrokenHistory) {
				return nil, err // the newest epoch must be whole
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("%s starts at TXID %d: %w", parts[len(parts)-1][0].key, want+1, err)
			}
			continue
		}
		if skip {
			continue
		}
		parts = append(parts, path)
		if fromZero {
			break
		}
		want = path[0].min - 1
		firstErr = nil
	}
	var chain []segment
	for i := len(parts) - 1; i >= 0; i-- {
		chain = append(chain, parts[i]...)
	}
	return chain, nil
}
