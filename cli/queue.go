package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/queue"
)

// celld queue list|info|pause-delivery|resume-delivery|purge|peek|redrive:
// Wrangler's `wrangler queues` verbs (and upstream's peek, redrive and
// pause/resume) on the fleet's queues. Each reaches the queue's cell like
// the fleet does (cellCaller): over signed peer HTTP to a live owner, or
// under this command's own tool lease. Stdout is data, stderr messages.

func (g *globals) withQueue(ctx context.Context, name string, fn func(*queue.Client) error) error {
	if err := queue.CheckName(name); err != nil {
		return usageErr("%v", err)
	}
	return g.withCaller(ctx, func(c caller) error { return fn(queue.NewClient(c, name)) })
}

// queueArg is the command's one QUEUE argument.
func queueArg(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 {
		return "", usageErr("%s takes one QUEUE, got %d arguments", cmd.FullName(), cmd.Args().Len())
	}
	return cmd.Args().First(), nil
}

// queueFlags are what every verb accepts: --local/--remote are refused
// with upstream's reason.
func queueFlags(extra ...cli.Flag) []cli.Flag {
	return append(extra,
		&cli.BoolFlag{Name: "local", Hidden: true},
		&cli.BoolFlag{Name: "remote", Hidden: true},
	)
}

func refuseLocation(cmd *cli.Command) error {
	if cmd.IsSet("local") || cmd.IsSet("remote") {
		return usageErr("--local/--remote: a queue name addresses one queue in one fleet")
	}
	return nil
}

func queueCommand(g *globals) *cli.Command {
	return &cli.Command{
		Name:  "queue",
		Usage: "inspect and operate the fleet's queues (Wrangler's queues verbs, plus peek and redrive)",
		Commands: []*cli.Command{
			queueListCommand(g), queueInfoCommand(g),
			queuePauseCommand(g, true, "pause-delivery", []string{"pause"}),
			queuePauseCommand(g, false, "resume-delivery", []string{"resume"}),
			queuePurgeCommand(g), queuePeekCommand(g), queueRedriveCommand(g),
		},
	}
}

// queueRow is one queue of `celld queue list`.
type queueRow struct {
	Name      string `json:"name"`
	Owner     string `json:"owner,omitempty"`
	OwnerLive bool   `json:"owner_live"`
}

func queueListCommand(g *globals) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "list",
		Usage: "list the queues the fleet holds (every queue cell in the bucket)",
		Flags: queueFlags(&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := refuseLocation(cmd); err != nil {
				return err
			}
			s, err := g.openStore()
			if err != nil {
				return reachErr(err)
			}
			cells, err := fleet.ListCells(ctx, s, time.Now().UnixMilli())
			if err != nil {
				return reachErr(err)
			}
			rows := []queueRow{}
			for _, c := range cells {
				if name, ok := queue.NameOf(c.Cell); ok {
					rows = append(rows, queueRow{Name: name, Owner: c.Own.Node, OwnerLive: c.OwnerLive})
				}
			}
			slices.SortFunc(rows, func(a, b queueRow) int { return strings.Compare(a.Name, b.Name) })
			w := cmd.Root().Writer
			if asJSON {
				return writeJSON(w, rows)
			}
			for _, r := range rows {
				fmt.Fprintln(w, r.Name)
			}
			return nil
		},
	}
}

func queueInfoCommand(g *globals) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:      "info",
		Usage:     "a queue's backlog, stored messages, consumer and delivery state",
		ArgsUsage: "QUEUE",
		Flags:     queueFlags(&cli.BoolFlag{Name: "json", Usage: "print one compact JSON object", Destination: &asJSON}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			name, err := queueTarget(cmd)
			if err != nil {
				return err
			}
			var in queue.Info
			if err := g.withQueue(ctx, name, func(c *queue.Client) (err error) {
				in, err = c.Info(ctx)
				return err
			}); err != nil {
				return err
			}
			w := cmd.Root().Writer
			if asJSON {
				b, err := marshalJSON(in)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", b)
				return err
			}
			return writeJSON(w, in)
		},
	}
}

func queuePauseCommand(g *globals, pause bool, name string, aliases []string) *cli.Command {
	verb, done, usage := "Resuming", "Resumed", "resume message delivery (producers could send all along)"
	if pause {
		verb, done, usage = "Pausing", "Paused", "pause message delivery; producers can still send"
	}
	return &cli.Command{
		Name:      name,
		Aliases:   aliases,
		Usage:     usage,
		ArgsUsage: "QUEUE",
		Flags:     queueFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q, err := queueTarget(cmd)
			if err != nil {
				return err
			}
			ew := cmd.Root().ErrWriter
			fmt.Fprintf(ew, "%s message delivery for queue %s.\n", verb, q)
			if err := g.withQueue(ctx, q, func(c *queue.Client) error { return c.SetPaused(ctx, pause) }); err != nil {
				return err
			}
			_, err = fmt.Fprintf(ew, "%s message delivery for queue %s.\n", done, q)
			return err
		},
	}
}

func queuePurgeCommand(g *globals) *cli.Command {
	var force bool
	return &cli.Command{
		Name:        "purge",
		Usage:       "delete every message of a queue (asks you to type the queue's name; --force in scripts)",
		ArgsUsage:   "QUEUE",
		Description: "A batch being delivered now settles to nothing; its messages are gone too.",
		Flags:       queueFlags(&cli.BoolFlag{Name: "force", Usage: "do not ask", Destination: &force}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q, err := queueTarget(cmd)
			if err != nil {
				return err
			}
			if !force {
				in, ok := cmd.Root().Reader.(*os.File)
				if !ok || !isTerminal(in) {
					return &Error{Err: errors.New("celld queue purge permanently removes messages; repeat with --force"), Code: ExitUsage}
				}
				ok, err := confirmName(cmd.Root().ErrWriter, cmd.Root().Reader, q)
				if err != nil || !ok {
					fmt.Fprintln(cmd.Root().ErrWriter, "Not purging.")
					return err
				}
			}
			var n int64
			if err := g.withQueue(ctx, q, func(c *queue.Client) (err error) {
				n, err = c.Purge(ctx)
				return err
			}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.Root().ErrWriter, "Purged Queue '%s' (%d messages)\n", q, n)
			return err
		},
	}
}

// confirmName asks for the queue's name to be typed, as Wrangler does.
func confirmName(w io.Writer, r io.Reader, name string) (bool, error) {
	fmt.Fprintf(w, "This operation will permanently delete all the messages in queue %s. Type %s to proceed. ", name, name)
	answer, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && answer == "" {
		return false, nil
	}
	return strings.TrimSpace(answer) == name, nil
}

// peekRow is one message as `celld queue peek` prints it.
type peekRow struct {
	ID          string `json:"id"`
	Timestamp   int64  `json:"timestamp"`
	Attempts    int    `json:"attempts"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"` // base64
	Source      string `json:"source,omitempty"`
}

func queuePeekCommand(g *globals) *cli.Command {
	var limit int
	var asJSON bool
	return &cli.Command{
		Name:      "peek",
		Usage:     "print the oldest messages without delivering them (bodies base64, with their content type)",
		ArgsUsage: "QUEUE",
		Flags: queueFlags(
			&cli.IntFlag{Name: "limit", Usage: "how many messages (1-100)", Value: queue.DefaultPeek, Destination: &limit},
			&cli.BoolFlag{Name: "json", Usage: "print compact JSON", Destination: &asJSON},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q, err := queueTarget(cmd)
			if err != nil {
				return err
			}
			if limit < 1 || limit > queue.MaxPeek {
				return usageErr("--limit must be between 1 and %d, not %d", queue.MaxPeek, limit)
			}
			var msgs []queue.Message
			if err := g.withQueue(ctx, q, func(c *queue.Client) (err error) {
				msgs, err = c.Peek(ctx, limit)
				return err
			}); err != nil {
				return err
			}
			rows := make([]peekRow, len(msgs))
			for i, m := range msgs {
				rows[i] = peekRow{ID: m.ID, Timestamp: m.Timestamp, Attempts: m.Attempts, ContentType: m.ContentType,
					Body: base64.StdEncoding.EncodeToString(m.Body), Source: m.Source}
			}
			w := cmd.Root().Writer
			if asJSON {
				b, err := marshalJSON(rows)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(w, "%s\n", b)
				return err
			}
			return writeJSON(w, rows)
		},
	}
}

func queueRedriveCommand(g *globals) *cli.Command {
	var limit int
	return &cli.Command{
		Name:      "redrive",
		Usage:     "move dead-lettered messages of a dead-letter queue back to the queues they came from",
		ArgsUsage: "DLQ",
		Flags:     queueFlags(&cli.IntFlag{Name: "limit", Usage: "how many messages (1-100)", Value: queue.MaxRedrive, Destination: &limit}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			q, err := queueTarget(cmd)
			if err != nil {
				return err
			}
			if limit < 1 || limit > queue.MaxRedrive {
				return usageErr("--limit must be between 1 and %d, not %d", queue.MaxRedrive, limit)
			}
			var n int
			if err := g.withQueue(ctx, q, func(c *queue.Client) (err error) {
				n, err = c.Redrive(ctx, limit)
				return err
			}); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.Root().ErrWriter, "Redrove %d message(s) from queue %s.\n", n, q)
			return err
		},
	}
}

// queueTarget is the QUEUE argument of a command that acts on one queue,
// after refusing Wrangler's --local/--remote (there is one place: the
// fleet's bucket).
func queueTarget(cmd *cli.Command) (string, error) {
	name, err := queueArg(cmd)
	if err != nil {
		return "", err
	}
	if err := refuseLocation(cmd); err != nil {
		return "", err
	}
	return name, nil
}
