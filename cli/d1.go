package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/d1"
)

// celld d1 execute|migrations list|migrations apply|migrate: Wrangler's
// `wrangler d1` commands on the fleet's databases. DB is a database_name
// or binding of the project's d1_databases; its cell is
// d1:<database_id or database_name>, reached like the fleet reaches it
// (cellCaller): over signed peer HTTP to a live owner, or under this
// command's own tool lease.
//
// Exit codes: 0 done (or nothing to do); 1 the SQL or a migration failed,
// or the cell could not be reached; 2 bad usage or config.

// d1Caller obtains the Caller of a command; tests replace it.
var d1Caller = func(ctx context.Context, g *globals) (caller, func(context.Context) error, error) {
	return g.cellCaller(ctx)
}

// d1ImportThreshold: a --file this large (or a Wrangler export) runs as
// an import: one transaction, progress on stderr, a summary instead of
// per-statement results.
const d1ImportThreshold = 1 << 20

// d1ExportHeader starts every `wrangler d1 export` file.
const d1ExportHeader = "PRAGMA defer_foreign_keys=TRUE;"

// d1Options pick the database.
type d1Options struct {
	Config string
	Env    string
	JSON   bool
}

func (o *d1Options) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "the Wrangler config file (default: wrangler.jsonc or wrangler.json in DIR)", Destination: &o.Config},
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "read d1_databases from env.NAME of the config", Destination: &o.Env},
		&cli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.JSON},
		// Accepted for Wrangler compatibility: celld always works on the
		// fleet's database and never asks.
		&cli.BoolFlag{Name: "local", Hidden: true},
		&cli.BoolFlag{Name: "remote", Hidden: true},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Hidden: true},
	}
}

// d1Target is a database resolved from the config.
type d1Target struct {
	Name          string // as given
	Cell          string
	MigrationsDir string
	Table         string
}

// resolve reads DB [DIR] and finds DB in the config's d1_databases by
// database_name or binding. Only d1_databases is read: a config that
// celld deploy would refuse still names its databases.
func (o *d1Options) resolve(cmd *cli.Command) (*d1Target, error) {
	args := cmd.Args().Slice()
	if len(args) == 0 || len(args) > 2 {
		return nil, &Error{Err: fmt.Errorf("%s takes DB [DIR], got %q", cmd.Name, args), Code: ExitUsage,
			Hint: "see " + cmd.FullName() + " --help"}
	}
	name, dir := args[0], "."
	if len(args) == 2 {
		dir = args[1]
	}
	path := findConfig(dir, o.Config)
	if path == "" {
		return nil, &Error{Err: fmt.Errorf("no wrangler.jsonc or wrangler.json in %s", dir), Code: ExitUsage,
			Hint: "run in the project directory, or pass the project directory after DB, or --config FILE"}
	}
	type database struct {
		Binding         string `json:"binding"`
		DatabaseName    string `json:"database_name"`
		DatabaseID      string `json:"database_id"`
		MigrationsDir   string `json:"migrations_dir"`
		MigrationsTable string `json:"migrations_table"`
	}
	type section struct {
		D1Databases []database `json:"d1_databases"`
	}
	var cfg struct {
		section
		Env map[string]section `json:"env"`
	}
	if err := readConfigSection(path, &cfg); err != nil {
		return nil, err
	}
	list := cfg.D1Databases
	if o.Env != "" {
		list = cfg.Env[o.Env].D1Databases // not inherited by environments
	}
	var found *database
	for i := range list {
		if list[i].DatabaseName == name || list[i].Binding == name {
			found = &list[i]
			break
		}
	}
	if found == nil {
		return nil, &Error{Err: fmt.Errorf("couldn't find a D1 DB with the name or binding %q in %s", name, path), Code: ExitUsage,
			Hint: "DB is a database_name or binding of d1_databases"}
	}
	if found.DatabaseID == "" && found.DatabaseName == "" {
		return nil, usageErr("%s: d1_databases entry %q has neither database_id nor database_name", path, name)
	}
	t := &d1Target{Name: name, Cell: d1.CellName(found.DatabaseID, found.DatabaseName),
		MigrationsDir: found.MigrationsDir, Table: found.MigrationsTable}
	if t.MigrationsDir == "" {
		t.MigrationsDir = d1.DefaultMigrationsDir
	}
	if !filepath.IsAbs(t.MigrationsDir) {
		t.MigrationsDir = filepath.Join(filepath.Dir(path), t.MigrationsDir)
	}
	if t.Table == "" {
		t.Table = d1.DefaultMigrationsTable
	}
	if err := d1.CheckMigrationsTable(t.Table); err != nil {
		return nil, &Error{Err: fmt.Errorf("%s: %w", path, err), Code: ExitUsage}
	}
	return t, nil
}

// withD1 runs fn with a client of the database and releases what reaching
// it took, even when fn fails.
func (g *globals) withD1(ctx context.Context, t *d1Target, fn func(*d1.Client) error) (err error) {
	c, done, err := d1Caller(ctx, g)
	if err != nil {
		return reachErr(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := done(dctx); derr != nil && err == nil {
			err = &Error{Err: fmt.Errorf("release %s: %w", t.Cell, derr), Code: ExitFailure}
		}
	}()
	return fn(&d1.Client{Caller: c, Cell: t.Cell})
}

func d1Command(g *globals) *cli.Command {
	apply := d1MigrationsApplyCommand(g, "apply")
	group := &cli.Command{
		Name:  "d1",
		Usage: "run SQL and migrations on the fleet's D1 databases (Wrangler's d1 commands)",
		Commands: []*cli.Command{
			d1ExecuteCommand(g),
			{
				Name:     "migrations",
				Usage:    "list or apply the migrations of a D1 database",
				Commands: []*cli.Command{d1MigrationsListCommand(g), apply},
			},
			d1MigrationsApplyCommand(g, "migrate"),
		},
	}
	// urfave/cli does not inherit OnUsageError: a bad flag after a
	// subcommand must still be a usage error (exit 2).
	var setUsage func(*cli.Command)
	setUsage = func(c *cli.Command) {
		c.OnUsageError = onUsageError
		for _, sub := range c.Commands {
			setUsage(sub)
		}
	}
	setUsage(group)
	return group
}

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

// renderD1Results prints Wrangler's local --json shape: one
// {results, success, meta: {duration}} per statement, rows as objects in
// column order, a BLOB as the string "[1, 2]".
func renderD1Results(w io.Writer, res []d1.Result) error {
	out := make([]d1Object, len(res))
	for i, r := range res {
		rows := make([]d1Object, len(r.Rows))
		for j, row := range r.Rows {
			o := make(d1Object, len(r.Columns))
			for k, col := range r.Columns {
				o[k] = d1Field{col, d1JSONValue(row[k])}
			}
			rows[j] = o
		}
		out[i] = d1Object{{"results", rows}, {"success", true}, {"meta", d1Object{{"duration", r.Meta.Duration}}}}
	}
	return writeJSON(w, out)
}

func d1JSONValue(v any) any {
	if b, ok := v.([]any); ok {
		return d1Text(b)
	}
	return v
}

// d1Text is a value as Wrangler's table prints it.
func d1Text(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(v))
		for i, b := range v {
			parts[i] = fmt.Sprint(b)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(v)
	}
}

// renderD1Tables prints, for every statement that returned rows, the
// statement (cut to 48 characters) and a table of its rows.
func renderD1Tables(w io.Writer, stmts []string, res []d1.Result) error {
	for i, r := range res {
		if len(r.Rows) == 0 {
			continue
		}
		q := ""
		if i < len(stmts) {
			q = strings.Join(strings.Fields(stmts[i]), " ")
		}
		if utf8.RuneCountInString(q) > 48 {
			q = string([]rune(q)[:48]) + "..."
		}
		fmt.Fprintln(w, q)
		rows := make([][]string, len(r.Rows))
		for j, row := range r.Rows {
			rows[j] = make([]string, len(row))
			for k, v := range row {
				rows[j][k] = d1Text(v)
			}
		}
		if err := d1BoxTable(w, r.Columns, rows); err != nil {
			return err
		}
	}
	return nil
}

// d1BoxTable draws a table with box characters, as Wrangler does.
func d1BoxTable(w io.Writer, header []string, rows [][]string) error {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = d1Width(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], d1Width(c))
			}
		}
	}
	line := func(l, m, r string) string {
		var b strings.Builder
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		return b.String() + r + "\n"
	}
	row := func(cells []string) string {
		var b strings.Builder
		b.WriteString("│")
		for i, wd := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + c + strings.Repeat(" ", wd-d1Width(c)) + " │")
		}
		return b.String() + "\n"
	}
	var b strings.Builder
	b.WriteString(line("┌", "┬", "┐"))
	b.WriteString(row(header))
	b.WriteString(line("├", "┼", "┤"))
	for _, r := range rows {
		b.WriteString(row(r))
	}
	b.WriteString(line("└", "┴", "┘"))
	_, err := io.WriteString(w, b.String())
	return err
}

// d1Width is the number of terminal cells s takes: wide (East Asian)
// characters and emoji such as ✅ and ❌ take two.
func d1Width(s string) int {
	n := 0
	for _, r := range s {
		n++
		switch {
		case r == 0x2705, r == 0x274C, r >= 0x1F300 && r <= 0x1FAFF,
			r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
			r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
			r >= 0xFFE0 && r <= 0xFFE6, r >= 0x20000 && r <= 0x3FFFD:
			n++
		}
	}
	return n
}

// d1Object is a JSON object whose keys keep their order.
type d1Object []d1Field

type d1Field struct {
	k string
	v any
}

func (o d1Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalJSON(f.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalJSON(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func d1MigrationsListCommand(g *globals) *cli.Command {
	o := &d1Options{}
	return &cli.Command{
		Name:      "list",
		Usage:     "list the migrations not yet applied to a D1 database",
		ArgsUsage: "DB [DIR]",
		Description: "Reads NNNN_name.sql from the database's migrations_dir (default ./migrations beside the config)\n" +
			"and compares them with its migrations table (migrations_table, default d1_migrations; created if\n" +
			"missing, with Wrangler's DDL). --json prints {database, cell, applied, pending}.\n" +
			"Exit 0: listed; 1: the database could not be reached; 2: usage or config (a file without a numeric prefix).",
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			t, files, err := d1Migrations(o, cmd)
			if err != nil {
				return err
			}
			return g.withD1(ctx, t, func(c *d1.Client) error {
				applied, err := c.AppliedMigrations(ctx, t.Table)
				if err != nil {
					return reachErr(err)
				}
				pending := d1.Pending(files, applied)
				out := cmd.Root().Writer
				if o.JSON {
					names := make([]string, len(pending))
					for i, f := range pending {
						names[i] = f.Name
					}
					return writeJSON(out, d1Object{{"database", t.Name}, {"cell", t.Cell}, {"applied", applied}, {"pending", names}})
				}
				return d1RenderPending(out, pending)
			})
		},
	}
}

func d1MigrationsApplyCommand(g *globals, name string) *cli.Command {
	o := &d1Options{}
	usage := "apply the pending migrations of a D1 database"
	if name == "migrate" {
		usage += " (alias of d1 migrations apply)"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "DB [DIR]",
		Description: "Applies the files `d1 migrations list` shows, in the order of their numeric prefix. Each file and\n" +
			"its row in the migrations table commit in one transaction; the first failure stops the run, naming\n" +
			"the file and the SQLite error: the migrations before it stay applied, nothing of it is. Never asks.\n" +
			"--json prints {database, cell, applied, failed}.\n" +
			"Exit 0: applied, or nothing to apply; 1: a migration failed (or the database could not be reached);\n" +
			"2: usage or config.",
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			t, files, err := d1Migrations(o, cmd)
			if err != nil {
				return err
			}
			out, errw := cmd.Root().Writer, cmd.Root().ErrWriter
			return g.withD1(ctx, t, func(c *d1.Client) error {
				applied, err := c.AppliedMigrations(ctx, t.Table)
				if err != nil {
					return reachErr(err)
				}
				pending := d1.Pending(files, applied)
				log := out
				if o.JSON {
					log = errw
				}
				if err := d1RenderPending(log, pending); err != nil {
					return err
				}
				var done []string
				var status [][]string
				failed := d1Object(nil)
				if len(pending) > 0 {
					fmt.Fprintf(log, "About to apply %d migration(s) to %s (%s)\n", len(pending), t.Name, t.Cell)
				}
				_, merr := c.Migrate(ctx, t.Table, pending, func(f d1.MigrationFile, err error) {
					if err != nil {
						status = append(status, []string{f.Name, "❌"})
						failed = d1Object{{"name", f.Name}, {"error", strings.TrimPrefix(err.Error(), d1.PrefixError)}}
						return
					}
					done = append(done, f.Name)
					status = append(status, []string{f.Name, "✅"})
					fmt.Fprintf(log, "✅ %s\n", f.Name)
				})
				if len(status) > 0 {
					if err := d1BoxTable(log, []string{"Name", "Status"}, status); err != nil {
						return err
					}
				}
				if o.JSON {
					if done == nil {
						done = []string{}
					}
					var f any
					if failed != nil {
						f = failed
					}
					if err := writeJSON(out, d1Object{{"database", t.Name}, {"cell", t.Cell}, {"applied", done}, {"failed", f}}); err != nil {
						return err
					}
				}
				if merr != nil {
					var me *d1.MigrationError
					if errors.As(merr, &me) {
						if !isD1Refusal(me.Err) {
							return reachErr(me.Err)
						}
						return &Error{Err: fmt.Errorf("Migration %s failed with the following errors:\n%s", me.Name, me.Err), Code: ExitFailure,
							Hint: "fix the file and apply again: the migrations before it are applied, nothing of this one is"}
					}
					return reachErr(merr)
				}
				return nil
			})
		},
	}
}

// d1Migrations resolves DB and reads its migrations directory.
func d1Migrations(o *d1Options, cmd *cli.Command) (*d1Target, []d1.MigrationFile, error) {
	t, err := o.resolve(cmd)
	if err != nil {
		return nil, nil, err
	}
	files, err := d1.ReadMigrations(t.MigrationsDir)
	var nd *d1.NoMigrationsDirError
	switch {
	case errors.As(err, &nd):
		return nil, nil, &Error{Err: err, Code: ExitUsage, Hint: "create it, or set migrations_dir in the database's d1_databases entry"}
	case err != nil:
		return nil, nil, &Error{Err: err, Code: ExitUsage}
	}
	return t, files, nil
}

func d1RenderPending(w io.Writer, pending []d1.MigrationFile) error {
	if len(pending) == 0 {
		_, err := fmt.Fprintln(w, "✅ No migrations to apply!")
		return err
	}
	fmt.Fprintln(w, "Migrations to be applied:")
	rows := make([][]string, len(pending))
	for i, f := range pending {
		rows[i] = []string{f.Name}
	}
	return d1BoxTable(w, []string{"Name"}, rows)
}
