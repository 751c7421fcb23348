package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv key get KEY: Wrangler's `wrangler kv key get`.

type kvKeyGetOptions struct {
	kvNamespaceOptions
	Text bool
}

func kvKeyGetCommand(g *globals) *cli.Command {
	o := &kvKeyGetOptions{}
	return &cli.Command{
		Name:        "get",
		Usage:       "print one key's value (its raw bytes; --text: as UTF-8 text with a newline)",
		ArgsUsage:   "KEY",
		Description: "A missing or expired key prints \"Value not found\" on stderr and exits 1.\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.BoolFlag{Name: "text", Usage: "decode the value as UTF-8 and end it with a newline", Destination: &o.Text},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv key get takes one KEY, got %d arguments", cmd.Args().Len())
			}
			id, _, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			var e kv.Entry
			if err := g.withNamespace(ctx, id, func(c *kv.Client) (err error) {
				e, err = c.Get(ctx, cmd.Args().First())
				return kvErr(err)
			}); err != nil {
				return err
			}
			if !e.Found {
				return &Error{Err: errors.New("Value not found"), Code: ExitFailure}
			}
			w := cmd.Root().Writer
			if o.Text {
				_, err = fmt.Fprintln(w, strings.ToValidUTF8(string(e.Value), "\uFFFD"))
			} else {
				_, err = w.Write(e.Value)
			}
			return err
		},
	}
}
