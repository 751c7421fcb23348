package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/d1"
)

// celld d1 execute DB (--command SQL | --file F): Wrangler's `wrangler d1 execute`.

type d1ExecuteOptions struct {
	d1Options
	Command string
	File    string
}

func d1ExecuteCommand(g *globals) *cli.Command {
	o := &d1ExecuteOptions{}
	return &cli.Command{
		Name:      "execute",
		Usage:     "run SQL on a D1 database",
		ArgsUsage: "DB [DIR]",
		Description: "Runs --command SQL or --file F, split into statements by Wrangler's rules, in one transaction:\n" +
			"all of it or nothing. Prints one {results, success, meta} per statement (JSON with --json or when\n" +
			"stdout is not a terminal). A --file of 1 MiB or more, or a `wrangler d1 export` dump, is imported:\n" +
			"progress on stderr, then one summary row. A binary SQLite file is refused.\n" +
			"Exit 0: done; 1: the SQL failed (nothing was applied) or the database could not be reached; 2: usage or config.",
		Flags: append(o.flags(),
			&cli.StringFlag{Name: "command", Usage: "the SQL to run", Destination: &o.Command},
			&cli.StringFlag{Name: "file", Usage: "a file of SQL to run (a dump, say)", Destination: &o.File},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if (o.Command == "") == (o.File == "") {
				if o.Command != "" {
					return usageErr("give --command or --file, not both")
				}
				return &Error{Err: errors.New("must provide --command or --file."), Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
			}
			sql := o.Command
			if o.File != "" {
				src, err := os.ReadFile(o.File)
				if err != nil {
					return usageErr("read --file: %v", err)
				}
				if bytes.HasPrefix(src, []byte("SQLite format 3")) {
					return &Error{Err: fmt.Errorf("%s is a binary SQLite database, not a SQL text file", o.File), Code: ExitUsage,
						Hint: "export it as SQL and execute that: sqlite3 " + o.File + " .dump > dump.sql (or wrangler d1 export)"}
				}
				sql = string(src)
			}
			t, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			out, errw := cmd.Root().Writer, cmd.Root().ErrWriter
			asJSON := o.JSON || !isTerminal(out)
			if o.File != "" && (len(sql) >= d1ImportThreshold || strings.HasPrefix(sql, d1ExportHeader)) {
				return g.withD1(ctx, t, func(c *d1.Client) error {
					return d1Import(ctx, c, o.File, sql, out, errw, asJSON, o.JSON)
				})
			}
			stmts, err := d1.SplitStatements(sql)
			if err != nil {
				return d1Fail(out, o.JSON, err)
			}
			return g.withD1(ctx, t, func(c *d1.Client) error {
				start := time.Now()
				res, err := c.Query(ctx, stmts)
				if err != nil {
					return d1Fail(out, o.JSON, err)
				}
				if !asJSON {
					fmt.Fprintf(errw, "🚣 %d commands executed successfully in %s.\n", len(stmts), time.Since(start).Round(time.Millisecond))
					return renderD1Tables(out, stmts, res)
				}
				return renderD1Results(out, res)
			})
		},
	}
}

// d1Fail reports a failed execute. With --json it prints Wrangler's
// {"error": {"text"}} on stdout too. A SQL error reads as Wrangler prints
// it: SQLite's message without the binding's D1_ERROR prefix.
func d1Fail(out io.Writer, asJSON bool, err error) error {
	if !isD1Refusal(err) {
		return reachErr(err)
	}
	msg := err.Error()
	var de *d1.Error
	var re *RequestError
	switch {
	case errors.As(err, &de) && de.Prefix == d1.PrefixError:
		msg = de.Msg
	case errors.As(err, &re) && re.Code+": " == d1.PrefixError:
		msg = strings.TrimPrefix(re.Message, d1.PrefixError)
	}
	if asJSON {
		writeJSON(out, map[string]any{"error": map[string]string{"text": msg}})
	}
	return &Error{Err: errors.New(msg), Code: ExitFailure}
}

// isD1Refusal recognizes the database's refusal of a request, by type:
// a RequestError (from the cell, here or on its owner) or, from a handler
// run in-process, the d1 package's own errors.
func isD1Refusal(err error) bool {
	var re *RequestError
	var de *d1.Error
	var se *d1.StatementError
	return errors.As(err, &re) || errors.As(err, &de) || errors.As(err, &se) || errors.Is(err, d1.ErrSeveralTransactions)
}

func d1Import(ctx context.Context, c *d1.Client, file, sql string, out, errw io.Writer, asJSON, errJSON bool) error {
	fmt.Fprintf(errw, "🌀 Importing %s (%.2f MB) into %s in one transaction…\n", file, float64(len(sql))/1e6, c.Cell)
	// The import is one request: the owner runs the whole file before it
	// answers. A heartbeat shows it is still going (and keeps CI runners
	// that kill silent jobs at bay).
	stop := make(chan struct{})
	beat := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(beat)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(errw, "   … %s elapsed\n", time.Since(start).Round(time.Second))
			}
		}
	}()
	res, err := c.Import(ctx, sql)
	close(stop)
	<-beat
	if err != nil {
		return d1Fail(out, errJSON, err)
	}
	elapsed := time.Since(start)
	fmt.Fprintf(errw, "🚣 Executed %d queries in %s (%d rows read, %d rows written; %.2f MB/s)\n",
		res.Statements, elapsed.Round(time.Millisecond), res.RowsRead, res.RowsWritten, float64(len(sql))/1e6/elapsed.Seconds())
	fmt.Fprintf(errw, "   Database is currently at bookmark %s.\n", res.Bookmark)
	summary := d1Object{
		{"Total queries executed", res.Statements},
		{"Rows read", res.RowsRead},
		{"Rows written", res.RowsWritten},
		{"Database size (MB)", fmt.Sprintf("%.2f", float64(res.SizeAfter)/1e6)},
	}
	if !asJSON {
		return d1BoxTable(out, []string{"Total queries executed", "Rows read", "Rows written", "Database size (MB)"},
			[][]string{{fmt.Sprint(res.Statements), fmt.Sprint(res.RowsRead), fmt.Sprint(res.RowsWritten), summary[3].v.(string)}})
	}
	return writeJSON(out, []d1Object{{
		{"results", []d1Object{summary}},
		{"success", true},
		{"finalBookmark", res.Bookmark},
		{"meta", d1Object{{"duration", res.Duration}, {"rows_read", res.RowsRead}, {"rows_written", res.RowsWritten}, {"size_after", res.SizeAfter}}},
	}})
}
