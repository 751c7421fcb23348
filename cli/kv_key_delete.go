package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv key delete KEY: Wrangler's `wrangler kv key delete`.

func kvKeyDeleteCommand(g *globals) *cli.Command {
	o := &kvNamespaceOptions{}
	return &cli.Command{
		Name:        "delete",
		Usage:       "delete one key (a missing key is not an error)",
		ArgsUsage:   "KEY",
		Description: kvExitCodes,
		Flags:       o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv key delete takes one KEY, got %d arguments", cmd.Args().Len())
			}
			id, display, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			key := cmd.Args().First()
			fmt.Fprintf(cmd.Root().Writer, "Deleting the key %q on namespace %s.\n", key, display)
			return g.withNamespace(ctx, id, func(c *kv.Client) error { return kvErr(c.Delete(ctx, key)) })
		},
	}
}
