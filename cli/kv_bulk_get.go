package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv bulk get FILE: Wrangler's `wrangler kv bulk get`, writing by
// default the file `kv bulk put` reads, so an export loads back as it was.

type kvBulkGetOptions struct {
	kvNamespaceOptions
	JSON   bool
	Format string
}

func kvBulkGetCommand(g *globals) *cli.Command {
	o := &kvBulkGetOptions{}
	return &cli.Command{
		Name:      "get",
		Usage:     "print the pairs of the keys of a JSON file ([\"key\", ...] or [{\"name\": \"key\"}, ...]) as a kv bulk put file",
		ArgsUsage: "FILE",
		Description: "Prints a JSON array that `celld kv bulk put` (and `wrangler kv bulk put`) reads back:\n" +
			"[{\"key\", \"value\", \"base64\"?, \"expiration\"?, \"metadata\"?}, ...]. A value that is not UTF-8 text\n" +
			"is written base64 with \"base64\": true; metadata and the absolute expiration are kept. Keys that\n" +
			"are not found are left out and named in a warning on stderr. Stdout holds only the data;\n" +
			"\"Success!\" goes to stderr.\n" +
			"--format wrangler prints Wrangler's own shape instead: {\"<key>\": {\"value\": <text or null>}, ...}\n" +
			"(values as text, no metadata).\n" +
			"Example:\n" +
			"  celld kv key list --binding KV > keys.json\n" +
			"  celld kv bulk get keys.json --binding KV > backup.json\n" +
			"  celld kv bulk put backup.json --namespace-id OTHER_ID\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.StringFlag{Name: "format", Value: "put", Usage: "put (a kv bulk put file) or wrangler (Wrangler's key → {value} object)", Destination: &o.Format},
			&cli.BoolFlag{Name: "json", Usage: "accepted for uniformity: the output is JSON either way", Destination: &o.JSON},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv bulk get takes one FILE, got %d arguments", cmd.Args().Len())
			}
			if o.Format != "put" && o.Format != "wrangler" {
				return usageErr("--format %q: want put or wrangler", o.Format)
			}
			id, _, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			keys, err := kvReadBulkKeys(cmd.Args().First())
			if err != nil {
				return err
			}
			var entries []kv.Entry
			if err := g.withNamespace(ctx, id, func(c *kv.Client) (err error) {
				entries, err = c.GetAll(ctx, keys)
				return kvErr(err)
			}); err != nil {
				return err
			}
			w, errw := cmd.Root().Writer, cmd.Root().ErrWriter
			if o.Format == "wrangler" {
				err = kv.WriteBulkGet(w, entries)
			} else {
				var missing []string
				missing, err = kv.WriteBulkPutFile(w, entries)
				if err == nil && len(missing) > 0 {
					lines := make([]string, len(missing))
					for i, k := range missing {
						q, _ := json.Marshal(k)
						lines[i] = string(q)
					}
					fmt.Fprintf(errw, "warning: %d of the keys were not found and are left out:\n%s\n", len(missing), kvCapLines(lines))
				}
			}
			if err != nil {
				return err
			}
			return success(errw)
		},
	}
}

func kvReadBulkKeys(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageErr("read %s: %v", file, err)
	}
	keys, err := kv.ParseBulkKeys(filepath.Base(file), data)
	if err != nil {
		return nil, &Error{Err: err, Code: ExitUsage}
	}
	return keys, nil
}
