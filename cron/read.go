package cron

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
)

// ErrNoSchedule: the Worker's cron cell has never been written (no node
// has loaded a deployment of it with crons yet).
var ErrNoSchedule = errors.New("no cron schedule in the bucket")

// Exists reports whether script's cron cell has any history in the
// bucket.
func Exists(ctx context.Context, store bucket.Store, script string) (bool, error) {
	p, err := store.List(ctx, cell.LTXPrefix(CellName(script)), "", 1)
	if err != nil {
		return false, fmt.Errorf("look for %s: %w", CellName(script), err)
	}
	return len(p.Objects) > 0, nil
}

// Read returns the schedule of script as the bucket holds it: the cron
// cell restored into a scratch file, without taking its ownership, so it
// works with no node running and disturbs none. In bucket mode it is what
// the owner has made durable (every recorded run is: a run is recorded,
// and durable, before the next starts); in fleet mode a recorded run is
// durable on the owner's followers first and reaches the cell's prefix
// with its next own upload (CELLD_FLEET_TRANSFER_MS).
func Read(ctx context.Context, store bucket.Store, script string) (State, error) {
	name := CellName(script)
	if ok, err := Exists(ctx, store, script); err != nil || !ok {
		if err == nil {
			err = ErrNoSchedule
		}
		return State{}, fmt.Errorf("read %s: %w", name, err)
	}
	dir, err := os.MkdirTemp("", "celld-cron-")
	if err != nil {
		return State{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cron.sqlite")
	if _, err := cell.Restore(ctx, store, name, path); err != nil {
		return State{}, fmt.Errorf("restore %s: %w", name, err)
	}
	db, err := cell.Open(path)
	if err != nil {
		return State{}, fmt.Errorf("open %s: %w", name, err)
	}
	defer db.Close()
	return load(db)
}
