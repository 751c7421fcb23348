package cell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/superfly/ltx"

	"github.com/celldgo/celld/bucket"
)

// LitestreamSnapshotLevel is the level Litestream keeps full snapshots at;
// the changes after a snapshot go to level 0.
const LitestreamSnapshotLevel = 9

// ExportedLTX is one object of an exported chain: where it came from and
// where it was written.
type ExportedLTX struct {
	Key              string // the bucket key
	Epoch            uint64
	MinTXID, MaxTXID uint64
	Path             string // the file written, relative to the export directory
}

// ExportLTX writes the chain Restore would apply for cell into dir in the
// layout a Litestream file replica has: the snapshot (the chain's first
// object, from TXID 1) as ltx/9/<min>-<max>.ltx and every later object as
// ltx/0/<min>-<max>.ltx, byte for byte as they are in the bucket. So
// `litestream restore -o db file:///dir` (or the ltx library's compactor
// over the files in TXID order) rebuilds the database. Each file is
// written beside its name and renamed, and checked to decode as LTX on
// the way. A cell with no history is an error wrapping ErrNoHistory.
func ExportLTX(ctx context.Context, store bucket.Store, cell, dir string) ([]ExportedLTX, error) {
	chain, err := planChain(ctx, store, cell)
	if err != nil {
		return nil, fmt.Errorf("export cell %s: %w", cell, err)
	}
	if len(chain) == 0 {
		return nil, fmt.Errorf("export cell %s: %w", cell, ErrNoHistory)
	}
	if chain[0].min != 1 {
		return nil, fmt.Errorf("export cell %s: %w: the chain starts at TXID %d, not at a snapshot", cell, ErrBrokenHistory, chain[0].min)
	}
	out := make([]ExportedLTX, 0, len(chain))
	for i, seg := range chain {
		level := 0
		if i == 0 {
			level = LitestreamSnapshotLevel
		}
		rel := filepath.Join("ltx", strconv.Itoa(level), ltx.FormatFilename(ltx.TXID(seg.min), ltx.TXID(seg.max)))
		if err := exportObject(ctx, store, seg.key, filepath.Join(dir, rel)); err != nil {
			return nil, fmt.Errorf("export cell %s: %w", cell, err)
		}
		out = append(out, ExportedLTX{Key: seg.key, Epoch: seg.epoch, MinTXID: seg.min, MaxTXID: seg.max, Path: rel})
	}
	return out, nil
}

// ErrNoHistory: the cell has nothing in the bucket.
var ErrNoHistory = errors.New("the cell has no history in the bucket")

func exportObject(ctx context.Context, store bucket.Store, key, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, _, err := store.Get(ctx, key)
	if err != nil {
		if errors.Is(err, bucket.ErrNotFound) {
			return fmt.Errorf("%w: %s is listed but missing: %w", ErrBrokenHistory, key, err)
		}
		return fmt.Errorf("read %s: %w", key, err)
	}
	if err := ltx.NewDecoder(bytes.NewReader(data)).Verify(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBrokenHistory, key, err)
	}
	tmp := path + ".tmp"
	err = os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
