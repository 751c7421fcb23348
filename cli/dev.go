package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
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
	Clean  bool
	Listen string
}

func devCommand(g *globals) *cli.Command {
	o := &devOptions{}
	return &cli.Command{
		Name:      "dev",
		Usage:     "run a Wrangler project locally on an embedded file:// bucket, redeploying on change",
		ArgsUsage: "[DIR]",
		Description: "State lives in DIR/.celld/dev (bucket and cell databases) and survives restarts;\n" +
			"--clean starts from empty state. A second celld dev on the same directory is refused.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "clean", Usage: "start from empty state", Destination: &o.Clean},
			&cli.StringFlag{Name: "listen", Usage: "address to serve on", Value: "127.0.0.1:9876", Destination: &o.Listen},
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
	root := filepath.Join(abs, ".celld", "dev")
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
	res, err := deploy.Deploy(ctx, store, abs, deploy.Options{Capabilities: deploy.Served()})
	if err != nil {
		return deployErr(err)
	}
	fmt.Fprintf(out, "deployed %s version %s\n", res.Worker, res.Version)
	fmt.Fprintf(out, "bucket file://%s (for celld d1, kv and cell commands: --bucket file://%s)\n", filepath.Join(root, "bucket"), filepath.Join(root, "bucket"))

	log := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ready := make(chan struct{})
	go func() {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		watchProject(ctx, abs, func() {
			r, err := deploy.Deploy(ctx, store, abs, deploy.Options{Capabilities: deploy.Served()})
			switch {
			case err != nil:
				fmt.Fprintf(errw, "redeploy failed (still serving the previous version):\n%v\n", err)
			case !r.Unchanged:
				fmt.Fprintf(out, "redeployed %s version %s\n", r.Worker, r.Version)
			}
		})
	}()
	err = server.Run(ctx, server.Options{
		Store: store, Node: devNode, Listen: o.Listen, InternalListen: "127.0.0.1:0",
		Version: version, TTL: 3 * time.Second, Logger: log, WaitForPrevious: true, Poll: 200 * time.Millisecond,
		StateDir: filepath.Join(root, "state"),
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
