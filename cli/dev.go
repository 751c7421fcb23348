package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/server"
)

type devOptions struct {
	Clean     bool
	Listen    string
	Port      int
	IP        string
	Vars      []string
	Env       string
	PersistTo string
	NoLog     bool
	// TestScheduled adds the /__scheduled route (wrangler dev
	// --test-scheduled); /cdn-cgi/handler/scheduled is always served.
	TestScheduled bool
}

func devCommand(g *globals) *cli.Command {
	o := &devOptions{}
	return &cli.Command{
		Name:      "dev",
		Usage:     "run a Wrangler project locally on an embedded file:// bucket, redeploying on change",
		ArgsUsage: "[DIR]",
		Description: "State lives in DIR/.celld/dev (bucket and cell databases; --persist-to moves it) and survives\n" +
			"restarts; --clean starts from empty state. A second celld dev on the same directory is refused.\n" +
			".dev.vars (or .dev.vars.<env>; without either, .env, .env.local, .env.<env>, .env.<env>.local)\n" +
			"and --var add to env, as Wrangler does. console output and one line per request are printed;\n" +
			"a change that fails to build or start is reported once and the previous version keeps serving.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "clean", Usage: "start from empty state", Destination: &o.Clean},
			&cli.StringFlag{Name: "listen", Usage: "address to serve on (--ip and --port set its parts)", Value: "127.0.0.1:9876", Destination: &o.Listen},
			&cli.IntFlag{Name: "port", Usage: "port to serve on (replaces the port of --listen)", Destination: &o.Port},
			&cli.StringFlag{Name: "ip", Usage: "address to serve on (replaces the host of --listen)", Destination: &o.IP},
			&cli.StringSliceFlag{Name: "var", Usage: "KEY:VALUE added to env (repeatable; wins over vars and .dev.vars)", Destination: &o.Vars},
			&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "run the config's env.NAME section", Destination: &o.Env},
			&cli.StringFlag{Name: "persist-to", Usage: "directory of the local state (default DIR/.celld/dev)", Destination: &o.PersistTo},
			&cli.BoolFlag{Name: "no-request-log", Usage: "do not print a line per request", Destination: &o.NoLog},
			&cli.BoolFlag{Name: "test-scheduled", Usage: "serve /__scheduled?cron=EXPR, which runs the scheduled() handler (as wrangler dev --test-scheduled); /cdn-cgi/handler/scheduled?cron=EXPR&time=MS is always served", Destination: &o.TestScheduled},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usageErr("dev takes at most one argument (the project directory), got %d", cmd.Args().Len())
			}
			dir := cmd.Args().First()
			if dir == "" {
				dir = "."
			}
			return runDev(ctx, cmd.Root().Writer, cmd.Root().ErrWriter, cmd.Root().Version, dir, o)
		},
	}
}

func runDev(ctx context.Context, out, errw io.Writer, version, dir string, o *devOptions) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usageErr("project directory %q: %v", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return usageErr("project directory %q does not exist", dir)
	}
	listen, err := devListen(o)
	if err != nil {
		return err
	}
	extra, err := parseVarFlags(o.Vars)
	if err != nil {
		return err
	}
	root := filepath.Join(abs, ".celld", "dev")
	if o.PersistTo != "" {
		if root, err = filepath.Abs(o.PersistTo); err != nil {
			return usageErr("--persist-to %q: %v", o.PersistTo, err)
		}
	}
	if o.Clean {
		if err := os.RemoveAll(root); err != nil {
			return fmt.Errorf("clean %s: %w", root, err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", root, err)
	}
	release, stale, err := claimDevDir(root)
	if err != nil {
		return err
	}
	defer release()
	store, err := bucket.NewFile(filepath.Join(root, "bucket"))
	if err != nil {
		return err
	}
	if stale {
		// The previous celld dev on this directory died without cleaning
		// up (its pid is gone): its lease cannot be renewed by anyone, so
		// drop it instead of waiting for it to expire.
		if err := store.Delete(ctx, core.LeaseKey(devNode)); err != nil {
			return fmt.Errorf("remove the stale dev lease: %w", err)
		}
	}
	devDeploy := func() (deploy.Result, error) {
		if err := syncDevVars(ctx, store, abs, o.Env, extra, errw); err != nil {
			return deploy.Result{}, err
		}
		return deploy.Deploy(ctx, store, abs, deploy.Options{Env: o.Env, Capabilities: deploy.Served(), SourceMaps: true})
	}
	res, err := devDeploy()
	if err != nil {
		return deployErr(err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(errw, "warning: "+w)
	}
	fmt.Fprintf(out, "deployed %s version %s\n", res.Worker, res.Version)
	fmt.Fprintf(out, "bucket file://%s (for celld d1, kv, queue and cell commands: --bucket file://%s)\n", filepath.Join(root, "bucket"), filepath.Join(root, "bucket"))

	log := slog.New(newDevLogHandler(out, errw))
	ready := make(chan struct{})
	go func() {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		watchProject(ctx, abs, func() {
			r, err := devDeploy()
			switch {
			case err != nil:
				fmt.Fprintf(errw, "✘ the change does not build (still serving the previous version):\n%v\n", err)
			case !r.Unchanged:
				fmt.Fprintf(out, "redeployed %s version %s\n", r.Worker, r.Version)
			}
		})
	}()
	err = server.Run(ctx, server.Options{
		Store: store, Node: devNode, Listen: listen, InternalListen: "127.0.0.1:0",
		Version: version, TTL: 3 * time.Second, Logger: log, WaitForPrevious: true, Poll: 200 * time.Millisecond,
		StateDir: filepath.Join(root, "state"),
		// One node, never a follower: bucket proofs, as a fleet-mode node
		// alone would give, without the follower side.
		Durability: server.DurabilityBucket,
		Dev: &server.DevOptions{
			HTMLErrors:    true,
			TestScheduled: o.TestScheduled,
			OnLoadError: func(version string, err error) {
				fmt.Fprintf(errw, "✘ version %s does not start (still serving the previous version):\n%v\n", version, err)
			},
		},
		// The access log is the request log, printed by devLogHandler.
		AccessLog: !o.NoLog,
		// One node: its own timers fire its alarms; the waker only picks up
		// alarms of cells evicted while idle, so it may scan often.
		WakerTick: time.Second,
		OnReady: func(public, internal string) {
			fmt.Fprintf(out, "ready on http://%s\n", public)
			close(ready)
		},
	})
	var fe *server.FenceError
	if errors.As(err, &fe) {
		return &Error{Err: err, Code: ExitFenced}
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// devNode is the node name of celld dev on its private bucket.
const devNode = "dev"

// claimDevDir refuses a second celld dev on the same directory: a pid file
// naming a live process wins. A stale pid file (a crash) is taken over and
// reported as stale.
func claimDevDir(root string) (release func(), stale bool, err error) {
	pidFile := filepath.Join(root, "dev.pid")
	if b, err := os.ReadFile(pidFile); err == nil {
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if perr == nil && pid != os.Getpid() && processAlive(pid) {
			return nil, false, &Error{Err: fmt.Errorf("another celld dev (pid %d) is already running on %s", pid, filepath.Dir(filepath.Dir(root))),
				Code: ExitUsage, Hint: "stop it first, or use a different project directory"}
		}
		stale = true
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, false, fmt.Errorf("write %s: %w", pidFile, err)
	}
	return func() { os.Remove(pidFile) }, stale, nil
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie (killed, not yet reaped) answers signal 0 but is dead.
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// watchProject polls the project's files (not .celld, node_modules or
// dot-directories) and calls changed after a change settles.
func watchProject(ctx context.Context, dir string, changed func()) {
	last := fingerprint(dir)
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if fp := fingerprint(dir); fp != last {
				last = fp
				changed()
			}
		}
	}
}

func fingerprint(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if d.IsDir() && path != dir && (strings.HasPrefix(name, ".") || name == "node_modules") {
			return filepath.SkipDir
		}
		if info, err := d.Info(); err == nil && !d.IsDir() {
			fmt.Fprintf(&b, "%s|%d|%d\n", path, info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// devListen is the address celld dev serves on: --listen, with --ip and
// --port replacing its parts.
func devListen(o *devOptions) (string, error) {
	host, port, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return "", usageErr("--listen %q: %v", o.Listen, err)
	}
	if o.IP != "" {
		host = o.IP
	}
	if o.Port != 0 {
		if o.Port < 0 || o.Port > 65535 {
			return "", usageErr("--port %d: want 0 to 65535", o.Port)
		}
		port = strconv.Itoa(o.Port)
	}
	return net.JoinHostPort(host, port), nil
}

// syncDevVars makes the dev bucket's secrets of the Worker exactly the
// project's .dev.vars (or .env) values and --var flags, so they reach env
// the way deployed secrets do; unchanged values write nothing.
func syncDevVars(ctx context.Context, store bucket.Store, dir, env string, extra map[string]string, errw io.Writer) error {
	path := findConfig(dir, "")
	if path == "" {
		return nil // deploy reports the missing config
	}
	cfg, err := deploy.ReadConfig(path, env)
	if err != nil || cfg.Name == "" {
		return nil // and the bad one
	}
	vals, _, err := devVars(dir, env)
	if err != nil {
		return usageErr("%v", err)
	}
	maps.Copy(vals, extra)
	cur, _, err := deploy.ReadSecrets(ctx, store, cfg.Name)
	if err != nil {
		return err
	}
	if maps.Equal(cur.Values, vals) {
		return nil
	}
	_, err = deploy.UpdateSecrets(ctx, store, cfg.Name, func(v map[string]string) error {
		clear(v)
		maps.Copy(v, vals)
		return nil
	})
	return err
}
