// Package cli is celld's command tree (urfave/cli v3): one file per
// command. Each action builds clients from its typed options, does the
// work through the packages below, and renders to the command's writer.
// It never calls os.Exit; main maps the returned error to an exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v3"
)

// Exit codes, documented in the README.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command ran and found a problem (e.g. a store fault)
	ExitUsage   = 2 // bad input or environment: flags, config, env values, unreachable store
	ExitFenced  = 3 // a node lost its lease and fenced itself
)

// Error is an error with an exit code and an operator hint.
type Error struct {
	Err  error
	Code int
	Hint string // printed as "Try: …"
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns the process exit code for err.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitFailure
}

// HintOf returns the operator hint carried by err, if any.
func HintOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Hint
	}
	return ""
}

func usageErr(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Code: ExitUsage}
}

// onUsageError turns a flag-parsing error into a usage error (exit 2). It
// is set on every command: urfave/cli does not inherit OnUsageError, so a
// bad flag after a subcommand would otherwise come back as a plain error
// (exit 1) with the help text dumped on stdout.
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	return &Error{Err: err, Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
}

// noArgs rejects positional arguments for a command that takes none, so a
// stray word (say, a bucket URL without --bucket) is not silently ignored.
func noArgs(cmd *cli.Command) error {
	if cmd.Args().Present() {
		return &Error{Err: fmt.Errorf("%s takes no arguments, got %q", cmd.Name, cmd.Args().Slice()),
			Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
	}
	return nil
}

// globals are the flags every command shares.
type globals struct {
	Bucket   string
	Endpoint string
	Region   string
	// Timeout bounds one request a command sends to a live owner
	// (--timeout); a frozen owner is given up on sooner, when its lease
	// expires.
	Timeout time.Duration
}

// New returns the root command. version is stamped by the linker.
func New(version string) *cli.Command {
	g := &globals{}
	cli.VersionPrinter = func(cmd *cli.Command) {
		fmt.Fprintf(cmd.Root().Writer, "celld %s\n", cmd.Root().Version)
	}
	root := &cli.Command{
		Name:                  "celld",
		Usage:                 "run Cloudflare Workers and Durable Objects on machines you own",
		Version:               version,
		EnableShellCompletion: true,
		// urfave/cli adds the completion command when the tree is set up.
		ConfigureShellCompletionCommand: configureCompletion,
		Writer:                          os.Stdout,
		ErrWriter:                       os.Stderr,
		// Errors are returned to main, which owns the exit code.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		OnUsageError:   onUsageError,
		// Without an action urfave/cli answers an unknown command with
		// "No help topic" as a plain error (exit 1); it is bad input.
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return &Error{Err: fmt.Errorf("unknown command %q", cmd.Args().First()), Code: ExitUsage, Hint: "see celld --help"}
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:        "bucket",
				Usage:       "the fleet's bucket: s3://NAME[/PREFIX] or file:///abs/path",
				Sources:     cli.EnvVars("CELLD_BUCKET"),
				Destination: &g.Bucket,
			},
			&cli.StringFlag{
				Name:        "endpoint",
				Usage:       "S3 endpoint URL for a non-AWS store, e.g. http://127.0.0.1:9000 (path-style addressing)",
				Sources:     cli.EnvVars("S3_ENDPOINT"),
				Destination: &g.Endpoint,
			},
			&cli.StringFlag{
				Name:        "region",
				Usage:       "S3 region",
				Value:       "us-east-1",
				Sources:     cli.EnvVars("AWS_REGION", "AWS_DEFAULT_REGION"),
				Destination: &g.Region,
			},
			&cli.DurationFlag{
				Name:        "timeout",
				Usage:       "give up on a request sent to a live node owning the cell after this long (one whose lease expires meanwhile is given up on then, and the cell taken over)",
				Value:       DefaultCallTimeout,
				Destination: &g.Timeout,
			},
		},
		Commands: []*cli.Command{
			diagnoseCommand(g),
			serveCommand(g),
			devCommand(g),
			cellCommand(g),
			cronCommand(g),
			deployCommand(g),
			topCommand(g),
			kvCommand(g),
			d1Command(g),
			queueCommand(g),
			r2Command(g),
			secretCommand(g),
		},
	}
	for _, c := range root.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
	}
	addExamples(root, "")
	return root
}
