package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/deploy"
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
	cfg, path, err := findProjectConfig(dir, o.Config, o.Env,
		"run in the project directory, or pass the project directory after DB, or --config FILE")
	if err != nil {
		return nil, err
	}
	list := cfg.D1Databases // an env's own: bindings are not inherited
	var found *deploy.D1Database
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
