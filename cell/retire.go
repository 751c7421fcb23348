package cell

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/superfly/ltx"

	"github.com/celldgo/celld/bucket"
)

// RetiredMarker is the object written into an epoch prefix before its LTX
// objects are deleted. Restore ignores a retired epoch entirely, so a
// deletion cut short never reads as a gap in the history.
const RetiredMarker = "retired"

// Retire deletes the LTX objects of epochs older than the newest epoch
// that holds a snapshot — history no restore needs — once every object of
// such an epoch is older than minAge. confirm is called before anything is
// written and must fail unless own.json still names the caller at its
// epoch (only the owner prunes). It returns the number of objects deleted.
func Retire(ctx context.Context, store bucket.Store, cell string, minAge time.Duration, now time.Time, confirm func(context.Context) error) (int, error) {
	prefix := LTXPrefix(cell)
	objs, err := bucket.ListAll(ctx, store, prefix)
	if err != nil {
		return 0, fmt.Errorf("retire %s: list: %w", cell, err)
	}
	type epochObjs struct {
		keys     []string
		newest   time.Time
		snapshot bool
		retired  bool
	}
	epochs := map[uint64]*epochObjs{}
	for _, o := range objs {
		dir, name, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix), "/")
		if !ok || len(dir) != 17 || dir[0] != 'e' {
			continue
		}
		e, err := strconv.ParseUint(dir[1:], 16, 64)
		if err != nil {
			continue
		}
		eo := epochs[e]
		if eo == nil {
			eo = &epochObjs{}
			epochs[e] = eo
		}
		if name == RetiredMarker {
			eo.retired = true
			continue
		}
		lo, _, err := ltx.ParseFilename(name)
		if err != nil {
			continue
		}
		eo.keys = append(eo.keys, o.Key)
		if o.Modified.After(eo.newest) {
			eo.newest = o.Modified
		}
		if lo == 1 {
			eo.snapshot = true
		}
	}
	var order []uint64
	for e := range epochs {
		order = append(order, e)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] > order[j] })
	var keep uint64 // the newest epoch with a snapshot: restore starts there or later
	for _, e := range order {
		if eo := epochs[e]; eo.snapshot && !eo.retired {
			keep = e
			break
		}
	}
	deleted := 0
	for _, e := range order {
		eo := epochs[e]
		if e >= keep || len(eo.keys) == 0 || now.Sub(eo.newest) < minAge {
			continue
		}
		if err := confirm(ctx); err != nil {
			return deleted, fmt.Errorf("retire %s: %w", cell, err)
		}
		marker := fmt.Sprintf("%se%016x/%s", prefix, e, RetiredMarker)
		if !eo.retired {
			if _, err := store.Put(ctx, marker, []byte("retired\n"), bucket.Cond{}); err != nil {
				return deleted, fmt.Errorf("retire %s: write %s: %w", cell, marker, err)
			}
		}
		for _, k := range eo.keys {
			if err := store.Delete(ctx, k); err != nil {
				return deleted, fmt.Errorf("retire %s: delete %s: %w", cell, k, err)
			}
			deleted++
		}
	}
	return deleted, nil
}
