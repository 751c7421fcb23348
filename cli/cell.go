package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/fleet"
)

func cellCommand(g *globals) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "cell",
		Usage: "inspect cells",
		Commands: []*cli.Command{{
			Name:  "list",
			Usage: "list every cell's ownership record: owner, epoch, released, whether the owner is live",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON}},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.Args().Len() > 0 {
					return usageErr("cell list takes no arguments")
				}
				s, err := g.openStore()
				if err != nil {
					return err
				}
				cells, err := fleet.ListCells(ctx, s, time.Now().UnixMilli())
				if err != nil {
					return storeErr(err)
				}
				if asJSON {
					return writeJSON(cmd.Root().Writer, cells)
				}
				return renderCells(cmd.Root().Writer, cells)
			},
		}, cellExportCommand(g)},
	}
}

func renderCells(w io.Writer, cells []fleet.CellInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tEPOCH\tOWNER\tSTATE")
	for _, c := range cells {
		state := "owner dead (takeover on next request)"
		switch {
		case c.Err != "":
			state = "unreadable: " + c.Err
		case c.Own.Released:
			state = "released"
		case c.OwnerLive:
			state = "live at " + c.Advertise
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", c.Cell, c.Own.Epoch, c.Own.Node, state)
	}
	return tw.Flush()
}
