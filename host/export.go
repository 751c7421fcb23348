package host

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
)

// ErrNoHistory is returned for a cell with nothing in the bucket.
var ErrNoHistory = cell.ErrNoHistory

// ExportedLTX is one object ExportLTX wrote.
type ExportedLTX = cell.ExportedLTX

// ExportLTX writes the cell's restore chain into dir in the layout of a
// Litestream file replica, without touching the cell's ownership.
func ExportLTX(ctx context.Context, s bucket.Store, name, dir string) ([]ExportedLTX, error) {
	return cell.ExportLTX(ctx, s, name, dir)
}

// RestoreCopy rebuilds the cell at path from the bucket without touching
// its ownership. A live owner's compaction may prune an object between the
// listing and the read; the restore is then planned again.
func RestoreCopy(ctx context.Context, s bucket.Store, name, path string) error {
	var err error
	for range 3 {
		if _, err = cell.Restore(ctx, s, name, path); !errors.Is(err, cell.ErrBrokenHistory) {
			break
		}
	}
	if err == nil {
		if _, serr := os.Stat(path); serr != nil {
			err = fmt.Errorf("export cell %s: %w", name, cell.ErrNoHistory)
		}
	}
	return err
}
