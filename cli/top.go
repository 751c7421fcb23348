package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/tui"
)

// minTopInterval keeps top from polling a fleet in a busy loop.
const minTopInterval = 100 * time.Millisecond

type topOptions struct {
	Interval time.Duration
	Once     bool
	JSON     bool
	Nodes    []string
}

func topCommand(g *globals) *cli.Command {
	o := &topOptions{}
	return &cli.Command{
		Name:  "top",
		Usage: "live fleet view: every node's health, cell counters, memory, lease and drain progress",
		Description: "Finds the live nodes from their leases in the bucket (or polls the --node addresses) and asks each\n" +
			"for GET /state on its internal listener every --interval (a summary from every node, the whole\n" +
			"state from the selected one). Each node shows its request and 5xx rates and the Worker version it\n" +
			"serves. A node that stops answering is marked unreachable; dead once its lease has expired (it\n" +
			"stopped without a drain); gone when it exits after a drain.\n\n" +
			"Keys: ↑/↓ or j/k select, enter details, s/S sort by the next/previous column, r reverse,\n" +
			"/ filter nodes and cells, ? help, q quit.\n\n" +
			"With --once or --json, or when stdout is not a terminal, prints one snapshot and exits:\n" +
			"0 when at least one node answered, 1 when none did, 2 on bad flags or an unreachable bucket.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Usage: "pause between polls", Value: time.Second, Destination: &o.Interval},
			&cli.BoolFlag{Name: "once", Usage: "print one snapshot as text and exit", Destination: &o.Once},
			&cli.BoolFlag{Name: "json", Usage: "print one snapshot as JSON and exit", Destination: &o.JSON},
			&cli.StringSliceFlag{Name: "node", Usage: "poll this internal address (HOST:PORT) instead of reading the bucket; repeatable", Destination: &o.Nodes},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			src, err := topSource(g, o)
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			if o.Once || o.JSON || !isTerminal(w) {
				return topOnce(ctx, w, src, o.JSON)
			}
			return topLive(ctx, w, src, o.Interval)
		},
	}
}

// topSource checks the options and builds the source: the addresses given,
// or the bucket's leases.
func topSource(g *globals, o *topOptions) (tui.Source, error) {
	if o.Interval < minTopInterval {
		return nil, usageErr("--interval %s: want at least %s", o.Interval, minTopInterval)
	}
	if len(o.Nodes) > 0 {
		for _, a := range o.Nodes {
			host, port, err := net.SplitHostPort(a)
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n <= 0 || n > 65535 {
				return nil, &Error{Err: fmt.Errorf("--node %q: want the internal address HOST:PORT", a), Code: ExitUsage,
					Hint: "pass a node's --internal-listen (or --advertise) address, e.g. --node 127.0.0.1:8081"}
			}
		}
		return &tui.AddrSource{Addrs: o.Nodes}, nil
	}
	s, err := g.openStore()
	if err != nil {
		return nil, err
	}
	return &tui.BucketSource{Store: s}, nil
}

// topOnce polls once and prints the snapshot.
func topOnce(ctx context.Context, w io.Writer, src tui.Source, asJSON bool) error {
	obs := src.Poll(ctx, tui.PollRequest{Full: true})
	snap := tui.Merge(tui.Snapshot{}, obs)
	if asJSON {
		if err := writeJSON(w, snap); err != nil {
			return err
		}
	} else if _, err := io.WriteString(w, tui.RenderText(snap)); err != nil {
		return err
	}
	switch {
	case snap.Answered() > 0:
		return nil
	case obs.ListErr != nil && len(snap.Nodes) == 0:
		return storeErr(obs.ListErr)
	case len(snap.Nodes) == 0:
		return &Error{Err: errors.New("no node answered: the bucket holds no live node lease"), Code: ExitFailure,
			Hint: "start a node with celld serve, or pass --node HOST:PORT"}
	default:
		return &Error{Err: fmt.Errorf("no node answered (%d tried)", len(snap.Nodes)), Code: ExitFailure,
			Hint: "check that the nodes' internal listeners are reachable from here"}
	}
}

// topLive runs the full-screen view until q, Ctrl-C or ctx ends.
func topLive(ctx context.Context, w io.Writer, src tui.Source, interval time.Duration) error {
	p := tea.NewProgram(tui.New(ctx, src, interval), tea.WithContext(ctx), tea.WithOutput(w), tea.WithAltScreen())
	_, err := p.Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // SIGINT/SIGTERM: a normal way to leave
	}
	if err != nil {
		return fmt.Errorf("run top: %w", err)
	}
	return nil
}
