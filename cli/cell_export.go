package cli

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/fleetlog"
	"github.com/celldgo/celld/host"
)

// celld cell export CELL (-o FILE.sqlite | --ltx DIR): a cell's data out of
// the fleet, as a plain SQLite file or as its LTX chain in Litestream's
// layout.

type cellExportOptions struct {
	Out  string
	LTX  string
	JSON bool
}

// cellExport is what an export did, as --json prints it.
type cellExport struct {
	Cell   string `json:"cell"`
	Epoch  uint64 `json:"epoch"`
	Source string `json:"source"` // "live owner NODE (bucket copy)" or "tool lease"
	Output string `json:"output,omitempty"`
	// LTX lists the files written under --ltx, relative to it.
	LTX []string `json:"ltx,omitempty"`
}

func cellExportCommand(g *globals) *cli.Command {
	o := &cellExportOptions{}
	return &cli.Command{
		Name:      "export",
		Usage:     "write a cell's current database as a SQLite file (-o) or its LTX chain in Litestream's layout (--ltx)",
		ArgsUsage: "CELL",
		Description: "-o FILE.sqlite writes the cell's database as of its last acknowledged write. If a live node owns\n" +
			"the cell it is left alone: the file is rebuilt from the bucket, which holds every write the owner\n" +
			"has acknowledged (a write is acknowledged only once its LTX is in the bucket). If nobody owns it,\n" +
			"the command takes it under a tool lease (epoch + 1) while it restores, so no node writes meanwhile,\n" +
			"and releases it.\n" +
			"--ltx DIR copies the chain a restore reads, byte for byte, as DIR/ltx/9/<min>-<max>.ltx (the\n" +
			"snapshot) and DIR/ltx/0/<min>-<max>.ltx (the changes after it): a Litestream file replica.\n" +
			"Examples:\n" +
			"  celld cell export d1:ledger -o ledger.sqlite && sqlite3 ledger.sqlite .tables\n" +
			"  celld cell export kv:0f2ac74b498b48028cb68387c421e279 --ltx ./kv-export\n" +
			"  litestream restore -o restored.sqlite file://$PWD/kv-export\n" +
			"Exit 0: written; 1: the cell's history is broken or the store failed; 2: bad input or no such cell.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the database to `FILE` (replaced if it exists)", Destination: &o.Out},
			&cli.StringFlag{Name: "ltx", Usage: "write the LTX chain under `DIR` in Litestream's layout", Destination: &o.LTX},
			&cli.BoolFlag{Name: "json", Usage: "print what was written as JSON", Destination: &o.JSON},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("cell export takes one CELL, got %d arguments", cmd.Args().Len())
			}
			if o.Out == "" && o.LTX == "" {
				return &Error{Err: errors.New("cell export needs -o FILE.sqlite or --ltx DIR"), Code: ExitUsage, Hint: "see celld cell export --help"}
			}
			name := cmd.Args().First()
			s, err := g.openStore()
			if err != nil {
				return err
			}
			res, err := exportCell(ctx, s, name, *o)
			if err != nil {
				return err
			}
			if o.JSON {
				return writeJSON(cmd.Root().Writer, res)
			}
			w := cmd.Root().Writer
			if res.Output != "" {
				fmt.Fprintf(w, "Exported %s (epoch %d, from the %s) to %s\n", name, res.Epoch, res.Source, res.Output)
			}
			if o.LTX != "" {
				fmt.Fprintf(w, "Exported %s's LTX chain (%d files) to %s\n", name, len(res.LTX), o.LTX)
			}
			return nil
		},
	}
}

func exportCell(ctx context.Context, s bucket.Store, name string, o cellExportOptions) (cellExport, error) {
	res := cellExport{Cell: name}
	ci, err := fleet.LookupCell(ctx, s, name, time.Now().UnixMilli())
	if err != nil {
		return res, storeErr(err)
	}
	res.Epoch = ci.Own.Epoch
	if o.LTX != "" {
		files, err := host.ExportLTX(ctx, s, name, o.LTX)
		if err != nil {
			return res, exportErr(err)
		}
		for _, f := range files {
			res.LTX = append(res.LTX, f.Path)
		}
	}
	if o.Out == "" {
		return res, nil
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(o.Out), ".celld-export-")
	if err != nil {
		return res, usageErr("write %s: %v", o.Out, err)
	}
	defer os.RemoveAll(tmpDir)
	restored := filepath.Join(tmpDir, "restored.sqlite")
	switch {
	case ci.OwnerLive:
		res.Source = "bucket copy of live owner " + ci.Own.Node
		err = host.RestoreCopy(ctx, s, name, restored)
	case ci.Own.Epoch == 0:
		// No ownership record: nothing to hold (and no history, unless
		// the record was deleted on release).
		res.Source = "bucket"
		err = host.RestoreCopy(ctx, s, name, restored)
	default:
		res.Source = "tool lease"
		res.Epoch, err = restoreUnderToolLease(ctx, s, name, restored)
		var el *fleet.ElsewhereError
		if errors.As(err, &el) {
			// A node took it meanwhile: leave it to that node.
			res.Source, res.Epoch = "bucket copy of a live owner", ci.Own.Epoch
			err = host.RestoreCopy(ctx, s, name, restored)
		}
	}
	if err != nil {
		return res, exportErr(err)
	}
	if err := vacuumInto(ctx, restored, o.Out); err != nil {
		return res, &Error{Err: err, Code: ExitFailure}
	}
	res.Output = o.Out
	return res, nil
}

// restoreUnderToolLease acquires the cell under a tool lease, restores
// it at path, and releases it; it returns the epoch it held.
func restoreUnderToolLease(ctx context.Context, s bucket.Store, name, path string) (uint64, error) {
	log := slog.New(slog.DiscardHandler)
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		return 0, err
	}
	tool, err := fleetlog.StartGated(ctx, s, fleet.Config{Node: toolName(), Kind: core.KindTool, TTL: 10 * time.Second, Logger: log})
	if err != nil {
		return 0, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		tool.Close(dctx)
	}()
	c, err := host.New(s, tool, log).Open(ctx, name, path, host.OpenOptions{})
	if err != nil {
		return 0, err
	}
	epoch := c.Epoch()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := c.Stop(dctx, host.PhaseReleasing); err != nil {
		return epoch, fmt.Errorf("release %s: %w", name, err)
	}
	return epoch, nil
}

// vacuumInto writes a compact, self-contained copy of the database at src
// to dst (through a file beside dst, renamed over it).
func vacuumInto(ctx context.Context, src, dst string) error {
	db, err := sql.Open("sqlite", "file:"+src+"?mode=ro")
	if err != nil {
		return fmt.Errorf("open restored database: %w", err)
	}
	defer db.Close()
	tmp := dst + ".tmp"
	os.Remove(tmp)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

func exportErr(err error) error {
	if errors.Is(err, host.ErrNoHistory) {
		return &Error{Err: err, Code: ExitUsage, Hint: "celld cell list shows the fleet's cells"}
	}
	return reachErr(err)
}
