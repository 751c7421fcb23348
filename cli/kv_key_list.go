package cli

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv key list: Wrangler's `wrangler kv key list`.

type kvKeyListOptions struct {
	kvNamespaceOptions
	Prefix string
	JSON   bool
}

func kvKeyListCommand(g *globals) *cli.Command {
	o := &kvKeyListOptions{}
	return &cli.Command{
		Name:  "list",
		Usage: "print every key (following cursors) as Wrangler's JSON array of {name, expiration?, metadata?}",
		Description: "The output is JSON either way (--json is accepted for uniformity); it can be fed to kv bulk get\n" +
			"and kv bulk delete.\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.StringFlag{Name: "prefix", Usage: "only keys starting with this", Destination: &o.Prefix},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (always)", Destination: &o.JSON},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			id, _, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			var keys []kv.ListedKey
			if err := g.withNamespace(ctx, id, func(c *kv.Client) (err error) {
				keys, err = c.ListAll(ctx, o.Prefix)
				return kvErr(err)
			}); err != nil {
				return err
			}
			return kvWriteKeys(cmd.Root().Writer, keys)
		},
	}
}

// kvWriteKeys prints a key listing as JavaScript's JSON.stringify(keys,
// null, 2) would (an empty listing as []).
func kvWriteKeys(w io.Writer, keys []kv.ListedKey) error {
	if keys == nil {
		keys = []kv.ListedKey{}
	}
	return writeJSON(w, keys)
}
