// Command celld runs Cloudflare Workers and Durable Objects on machines you
// own. See the README for the command surface and exit codes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/celldgo/celld/cli"
)

// version is stamped by the linker: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.New(version).Run(ctx, os.Args)
	stop()
	// An error already written to the log (serve in JSON mode) is not
	// printed again.
	if err != nil && !cli.Reported(err) {
		fmt.Fprintf(os.Stderr, "celld: %v\n", err)
		if hint := cli.HintOf(err); hint != "" {
			fmt.Fprintf(os.Stderr, "Try: %s\n", hint)
		}
	}
	os.Exit(cli.ExitCode(err))
}
