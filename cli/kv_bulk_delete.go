package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv bulk delete FILE: Wrangler's `wrangler kv bulk delete`.

type kvBulkDeleteOptions struct {
	kvNamespaceOptions
	Force bool
}

func kvBulkDeleteCommand(g *globals) *cli.Command {
	o := &kvBulkDeleteOptions{}
	return &cli.Command{
		Name:      "delete",
		Usage:     "delete the keys of a JSON file: [\"key\", ...] or [{\"name\": \"key\"}, ...]",
		ArgsUsage: "FILE",
		Description: "Asks first unless --force; without a terminal to ask on, --force is required.\n" +
			"Keys are deleted in batches of up to 10,000, each one transaction.\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "do not ask", Destination: &o.Force},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv bulk delete takes one FILE, got %d arguments", cmd.Args().Len())
			}
			id, display, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			file := cmd.Args().First()
			keys, err := kvReadBulkKeys(file)
			if err != nil {
				return err
			}
			w := cmd.Root().Writer
			if !o.Force {
				question := fmt.Sprintf("Are you sure you want to delete all the keys read from %q from kv-namespace with id %q?", filepath.Base(file), id)
				if display != id {
					question = fmt.Sprintf("Are you sure you want to delete all the keys read from %q from kv-namespace %s?", filepath.Base(file), display)
				}
				in, ok := cmd.Root().Reader.(*os.File)
				if !ok || !isTerminal(in) {
					return &Error{Err: errors.New(question + " (no terminal to ask on)"), Code: ExitUsage, Hint: "pass --force"}
				}
				fmt.Fprint(w, question+" (y/N) ")
				answer, _ := bufio.NewReader(cmd.Root().Reader).ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					_, err := fmt.Fprintf(w, "Not deleting keys read from %q.\n", filepath.Base(file))
					return err
				}
			}
			bar := newKVProgress(cmd.Root().ErrWriter, "Deleted")
			if err := g.withNamespace(ctx, id, func(c *kv.Client) error {
				_, err := c.DeleteAll(ctx, keys, bar.update)
				bar.finish()
				return kvErr(err)
			}); err != nil {
				return err
			}
			err = success(w)
			return err
		},
	}
}
