package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/diagnose"
)

type diagnoseOptions struct {
	ReadOnly bool
	JSON     bool
}

func diagnoseCommand(g *globals) *cli.Command {
	o := &diagnoseOptions{}
	return &cli.Command{
		Name:  "diagnose",
		Usage: "test that the bucket honours conditional writes and ranged reads, and list the fleet's nodes",
		Description: "Writes create, reject-create, update and reject-stale under probe/ (two must fail),\n" +
			"then checks a ranged read byte for byte, and cleans up.\n" +
			"Exit 0: the store can be trusted; 1: the store is broken (the fault is named);\n" +
			"2: the test could not run (unreachable endpoint, refused credentials, missing bucket).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "read-only", Usage: "skip the write tests (for credentials without write access)", Destination: &o.ReadOnly},
			&cli.BoolFlag{Name: "json", Usage: "print a machine-readable report", Destination: &o.JSON},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			s, err := g.openStore()
			if err != nil {
				return err
			}
			r, err := diagnose.Run(ctx, s, diagnose.Options{ReadOnly: o.ReadOnly})
			if err != nil {
				var env *diagnose.EnvError
				if errors.As(err, &env) {
					return &Error{Err: env.Err, Code: ExitUsage, Hint: env.Hint}
				}
				return err
			}
			if o.JSON {
				err = renderDiagnoseJSON(cmd.Root().Writer, r)
			} else {
				err = renderDiagnose(cmd.Root().Writer, r)
			}
			if err != nil {
				return err
			}
			if !r.OK() {
				return &Error{Err: fmt.Errorf("store %s cannot be trusted: %s", r.Bucket, firstFault(r)), Code: ExitFailure,
					Hint: "use a store with working conditional writes and ranged reads (S3, R2, GCS, MinIO ≥ RELEASE.2025-09-07)"}
			}
			return nil
		},
	}
}

func firstFault(r diagnose.Report) string {
	for _, c := range r.Checks {
		if c.Status == diagnose.StatusFail {
			return c.Fault
		}
	}
	return ""
}

func renderDiagnose(w io.Writer, r diagnose.Report) error {
	for _, c := range r.Checks {
		status := string(c.Status)
		if c.Status == diagnose.StatusFail {
			status = "FAIL"
		}
		line := status + " " + c.Name
		switch {
		case c.Name == "fleet":
			line += ": " + c.Detail
		case c.Detail != "":
			line += " (" + c.Detail + ")"
		}
		if c.Fault != "" {
			line += ": " + c.Fault
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
		if c.Name == "fleet" {
			for _, l := range r.Leases {
				if _, err := fmt.Fprintln(w, "  "+leaseLine(l)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// leaseLine renders one node lease for diagnose and cell listings.
func leaseLine(l diagnose.Lease) string {
	if l.Error != "" {
		return fmt.Sprintf("%s: unreadable: %s", l.Key, l.Error)
	}
	when := "expires in " + humanMS(l.ExpiresIn)
	if l.ExpiresIn <= 0 {
		when = "expired " + humanMS(-l.ExpiresIn) + " ago"
	}
	adv := l.Advertise
	if adv == "" {
		adv = "-"
	}
	return fmt.Sprintf("node %s (%s) advertise %s, %s, version %s", l.Node, l.Kind, adv, when, l.Version)
}

func humanMS(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}

func renderDiagnoseJSON(w io.Writer, r diagnose.Report) error {
	out := struct {
		OK bool `json:"ok"`
		diagnose.Report
	}{r.OK(), r}
	return writeJSON(w, out)
}
