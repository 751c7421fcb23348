package cell

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/celldgo/celld/bucket"
)

// PruneEpoch deletes the LTX objects of cell's epoch (the caller's own,
// current one) that no restore needs: every object another object of the
// epoch covers — everything below its newest snapshot, the segments under
// a merge, merges under a larger merge. Retire prunes whole older epochs;
// this keeps a cell that stays in one epoch for months from piling up its
// history there. A covered object goes only once the object covering it
// is at least minAge old, so a restore that listed the epoch before that
// object existed has had that long to fetch what it planned. What remains
// is the objects no other covers: merges are laminar and snapshots start
// at TXID 1, so those are exactly the chain a restore applies.
//
// confirm is called before anything is deleted and must fail unless
// own.json still names the caller at epoch. It returns the number of
// objects deleted.
func PruneEpoch(ctx context.Context, store bucket.Store, cell string, epoch uint64, minAge time.Duration, now time.Time, confirm func(context.Context) error) (int, error) {
	prefix := LTXPrefix(cell)
	dir := fmt.Sprintf("%se%016x/", prefix, epoch)
	objs, err := bucket.ListAll(ctx, store, dir)
	if err != nil {
		return 0, fmt.Errorf("prune %s: list: %w", cell, err)
	}
	type object struct {
		segment
		modified time.Time
	}
	var all []object
	for _, o := range objs {
		if s, ok := parseSegmentKey(prefix, o.Key); ok && s.epoch == epoch && s.min >= 1 && s.min <= s.max {
			all = append(all, object{s, o.Modified})
		}
	}
	// By first TXID, the widest first: whatever covers an object comes
	// before it, so the furthest TXID reached by an old enough object so
	// far tells whether it is covered.
	slices.SortFunc(all, func(a, b object) int {
		return cmp.Or(cmp.Compare(a.min, b.min), cmp.Compare(b.max, a.max))
	})
	var victims []string
	var reach uint64 // the highest maxTXID of an old enough object so far
	for _, o := range all {
		if o.max <= reach {
			victims = append(victims, o.key)
			continue
		}
		if now.Sub(o.modified) >= minAge {
			reach = o.max
		}
	}
	if len(victims) == 0 {
		return 0, nil
	}
	if err := confirm(ctx); err != nil {
		return 0, fmt.Errorf("prune %s: %w", cell, err)
	}
	deleted := 0
	for _, k := range victims {
		if err := store.Delete(ctx, k); err != nil {
			return deleted, fmt.Errorf("prune %s: delete %s: %w", cell, k, err)
		}
		deleted++
	}
	return deleted, nil
}
