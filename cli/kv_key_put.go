package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv key put KEY [VALUE]: Wrangler's `wrangler kv key put`.

type kvKeyPutOptions struct {
	kvNamespaceOptions
	Path       string
	TTL        int64
	Expiration int64
	Metadata   string
}

func kvKeyPutCommand(g *globals) *cli.Command {
	o := &kvKeyPutOptions{}
	return &cli.Command{
		Name:        "put",
		Usage:       "write one key",
		ArgsUsage:   "KEY [VALUE]",
		Description: "Exactly one of VALUE and --path gives the value (--path reads the file's bytes).\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.StringFlag{Name: "path", Usage: "read the value from this file", Destination: &o.Path},
			&cli.Int64Flag{Name: "ttl", Usage: "expire this many seconds from now (at least 60)", Destination: &o.TTL},
			&cli.Int64Flag{Name: "expiration", Usage: "expire at this time, in seconds since the UNIX epoch", Destination: &o.Expiration},
			&cli.StringFlag{Name: "metadata", Usage: "a JSON value stored with the key (at most 1024 bytes)", Destination: &o.Metadata},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			args := cmd.Args().Slice()
			if len(args) < 1 || len(args) > 2 {
				return usageErr("kv key put takes KEY and an optional VALUE, got %d arguments", len(args))
			}
			if (len(args) == 2) == (o.Path != "") {
				return usageErr("Exactly one of the arguments value and path is required")
			}
			id, display, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			p := kv.Pair{Key: args[0]}
			line := ""
			if o.Path != "" {
				if p.Value, err = os.ReadFile(o.Path); err != nil {
					return usageErr("read value: %v", err)
				}
				line = fmt.Sprintf("Writing the contents of %s to the key %q on namespace %s", o.Path, p.Key, display)
			} else {
				p.Value = []byte(args[1])
				line = fmt.Sprintf("Writing the value %q to key %q on namespace %s", args[1], p.Key, display)
			}
			if cmd.IsSet("ttl") {
				p.ExpirationTTL = &o.TTL
			}
			if cmd.IsSet("expiration") {
				p.Expiration = &o.Expiration
			}
			if o.Metadata != "" {
				if !json.Valid([]byte(o.Metadata)) {
					return usageErr("--metadata %q is not valid JSON", o.Metadata)
				}
				p.Metadata = json.RawMessage(o.Metadata)
				line += fmt.Sprintf(" with metadata %q", o.Metadata)
			}
			fmt.Fprintln(cmd.Root().Writer, line+".")
			return g.withNamespace(ctx, id, func(c *kv.Client) error { return kvErr(c.Put(ctx, p)) })
		},
	}
}
