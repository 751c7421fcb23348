package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv bulk put FILE: Wrangler's `wrangler kv bulk put`.

func kvBulkPutCommand(g *globals) *cli.Command {
	o := &kvNamespaceOptions{}
	return &cli.Command{
		Name:      "put",
		Usage:     "write the pairs of a JSON file: [{key, value, expiration?, expiration_ttl?, metadata?, base64?}]",
		ArgsUsage: "FILE",
		Description: "The whole file is checked first; if any item is malformed or would be refused, the offending\n" +
			"items are named (up to 12) and nothing is written. Pairs are then written in batches of up to\n" +
			"10,000 (and 96 MiB), each one request and one transaction, with progress on stderr: an\n" +
			"interruption leaves whole batches, and running the same file again is harmless.\n" +
			"A base64 value is stored as the bytes it decodes to. Both expiration and expiration_ttl: the TTL wins.\n" +
			kvExitCodes,
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv bulk put takes one FILE, got %d arguments", cmd.Args().Len())
			}
			id, _, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			file := cmd.Args().First()
			data, err := os.ReadFile(file)
			if err != nil {
				return usageErr("read %s: %v", file, err)
			}
			pairs, warnings, err := kv.ParseBulkPut(filepath.Base(file), data, time.Now().Unix())
			errw := cmd.Root().ErrWriter
			if len(warnings) > 0 {
				fmt.Fprintf(errw, "warning: Unexpected key-value properties in %q.\n%s\n", filepath.Base(file), kvCapLines(warnings))
			}
			if err != nil {
				return &Error{Err: err, Code: ExitUsage}
			}
			bar := newKVProgress(errw, "Uploaded")
			if err := g.withNamespace(ctx, id, func(c *kv.Client) error {
				_, err := c.PutAll(ctx, pairs, bar.update)
				bar.finish()
				return kvErr(err)
			}); err != nil {
				return err
			}
			err = success(cmd.Root().Writer)
			return err
		},
	}
}
