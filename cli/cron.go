package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/deploy"
)

func cronCommand(g *globals) *cli.Command {
	var asJSON bool
	var name string
	return &cli.Command{
		Name:  "cron",
		Usage: "inspect cron triggers",
		Commands: []*cli.Command{{
			Name: "list",
			Usage: "the live Worker's cron triggers (or --name's): each expression's next occurrence, last run, outcome and retry, " +
				"as the bucket holds them (no node needed; in fleet mode as of the cron cell's last own upload)",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &asJSON},
				&cli.StringFlag{Name: "name", Usage: "the Worker (default: the live deployment's)", Destination: &name},
			},
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.Args().Len() > 0 {
					return usageErr("cron list takes no arguments")
				}
				s, err := g.openStore()
				if err != nil {
					return err
				}
				l, err := listCrons(ctx, s, name)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(cmd.Root().Writer, l)
				}
				return renderCrons(cmd.Root().Writer, l)
			},
		}},
	}
}

// cronList is `celld cron list --json`: the schedule (times in unix ms)
// and the crons the live deployment configures.
type cronList struct {
	Worker      string   `json:"worker"`
	LiveVersion string   `json:"live_version,omitempty"` // when the Worker is the live one
	LiveCrons   []string `json:"live_crons"`
	// Scheduled is false until a node has synced the schedule into the
	// Worker's cron cell.
	Scheduled bool `json:"scheduled"`
	cron.State
}

func listCrons(ctx context.Context, s bucket.Store, name string) (cronList, error) {
	l := cronList{Worker: name, LiveCrons: []string{}}
	dep, err := deploy.Current(ctx, s)
	switch {
	case errors.Is(err, deploy.ErrNoDeployment):
		if name == "" {
			return l, fmt.Errorf("no deployment: name the Worker with --name")
		}
	case err != nil:
		return l, storeErr(err)
	case name == "" || name == dep.Manifest.ScriptName:
		l.Worker, l.LiveVersion = dep.Manifest.ScriptName, dep.Manifest.Version
		if dep.Manifest.Triggers != nil {
			l.LiveCrons = dep.Manifest.Triggers.Crons
		}
	}
	st, err := cron.Read(ctx, s, l.Worker)
	switch {
	case errors.Is(err, cron.ErrNoSchedule):
		l.State = cron.State{Script: l.Worker, Triggers: []cron.Trigger{}}
	case err != nil:
		return l, storeErr(err)
	default:
		l.State, l.Scheduled = st, true
	}
	return l, nil
}

func renderCrons(w io.Writer, l cronList) error {
	at := func(ms int64) string {
		if ms == 0 {
			return "-"
		}
		return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
	}
	switch {
	case !l.Scheduled && len(l.LiveCrons) == 0:
		fmt.Fprintf(w, "%s has no cron triggers\n", l.Worker)
		return nil
	case !l.Scheduled:
		fmt.Fprintf(w, "%s: %d cron trigger(s) not scheduled yet (no node has loaded version %s)\n", l.Worker, len(l.LiveCrons), l.LiveVersion)
		for _, c := range l.LiveCrons {
			fmt.Fprintf(w, "  %s\n", c)
		}
		return nil
	}
	fmt.Fprintf(w, "%s: schedule of version %s, synced %s; alarm %s\n", l.Worker, l.Version, at(l.Synced), at(l.Alarm))
	if l.LiveVersion != "" && l.LiveVersion != l.Version {
		fmt.Fprintf(w, "  (the live version is %s; its nodes have not synced it yet)\n", l.LiveVersion)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CRON\tNEXT\tLAST OCCURRENCE\tSTARTED\tOUTCOME\tRUNS\tFAILED\tSKIPPED\tRETRY")
	for _, t := range l.Triggers {
		outcome := t.LastOutcome
		switch {
		case outcome == "":
			outcome = "-"
		case t.LastDone >= t.LastStarted && t.LastStarted > 0:
			outcome += fmt.Sprintf(" (%s)", time.Duration(t.LastDone-t.LastStarted)*time.Millisecond)
		}
		if t.LastError != "" {
			outcome += ": " + t.LastError
		}
		retry := "-"
		if t.RetryOf != 0 {
			retry = fmt.Sprintf("#%d of %s at %s", t.Retry, at(t.RetryOf), at(t.RetryAt))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", t.Cron, at(t.Next), at(t.LastScheduled), at(t.LastStarted), outcome, t.Runs, t.Failures, t.Skipped, retry)
	}
	return tw.Flush()
}
