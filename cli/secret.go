package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/deploy"
)

type secretOptions struct {
	Env, Config, Cwd, Name string
}

func (o *secretOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "the config's env.NAME (the Worker <name>-NAME)", Destination: &o.Env},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "the Wrangler config file (default: wrangler.jsonc, wrangler.json or wrangler.toml in --cwd)", Destination: &o.Config},
		&cli.StringFlag{Name: "cwd", Usage: "the project directory", Value: ".", Destination: &o.Cwd},
		&cli.StringFlag{Name: "name", Usage: "the Worker's name, instead of reading it from the config", Destination: &o.Name},
	}
}

// worker names the Worker whose secrets the command changes.
func (o *secretOptions) worker() (string, error) {
	if o.Name != "" {
		return o.Name, nil
	}
	cfg, _, err := findProjectConfig(o.Cwd, o.Config, o.Env, "run in the project directory, or pass --cwd DIR, --config FILE or --name WORKER")
	if err != nil {
		return "", err
	}
	if cfg.Name == "" {
		return "", usageErr("the config has no \"name\"; pass --name WORKER")
	}
	return cfg.Name, nil
}

func secretCommand(g *globals) *cli.Command {
	group := &cli.Command{
		Name:  "secret",
		Usage: "set, delete and list the Worker's secrets (Wrangler's secret commands)",
		Description: "Secrets are stored in the fleet's bucket (secrets/<worker>.json), never in a deployment's\n" +
			"manifest or in logs; anyone with the bucket's credentials can read them: bucket credentials\n" +
			"are fleet-admin credentials. A change is deployed at once, as a new version of the live Worker.",
		Commands: []*cli.Command{secretPutCommand(g), secretDeleteCommand(g), secretListCommand(g)},
	}
	for _, c := range group.Commands {
		c.OnUsageError = onUsageError
	}
	return group
}

func secretPutCommand(g *globals) *cli.Command {
	o := &secretOptions{}
	return &cli.Command{
		Name: "put", Usage: "create or replace a secret", ArgsUsage: "NAME",
		Description: "The value is read from stdin: piped (one trailing newline is dropped), or typed at a prompt\n" +
			"that does not echo it.",
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			name, err := secretArg(cmd)
			if err != nil {
				return err
			}
			script, err := o.worker()
			if err != nil {
				return err
			}
			value, err := readSecretValue(cmd.Root().Reader, cmd.Root().ErrWriter)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.Root().Writer, "Creating the secret for the Worker %q\n", script)
			if err := g.changeSecrets(ctx, cmd.Root().ErrWriter, script, func(v map[string]string) error { v[name] = value; return nil }); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.Root().Writer, "Success! Uploaded secret %s\n", name)
			return err
		},
	}
}

func secretDeleteCommand(g *globals) *cli.Command {
	o := &secretOptions{}
	return &cli.Command{
		Name: "delete", Usage: "delete a secret", ArgsUsage: "NAME", Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			name, err := secretArg(cmd)
			if err != nil {
				return err
			}
			script, err := o.worker()
			if err != nil {
				return err
			}
			err = g.changeSecrets(ctx, cmd.Root().ErrWriter, script, func(v map[string]string) error {
				if _, ok := v[name]; !ok {
					return fmt.Errorf("secret %s of %s: %w", name, script, deploy.ErrNoSecret)
				}
				delete(v, name)
				return nil
			})
			if errors.Is(err, deploy.ErrNoSecret) {
				return &Error{Err: err, Code: ExitUsage, Hint: "celld secret list shows the names"}
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.Root().Writer, "Success! Deleted secret %s\n", name)
			return err
		},
	}
}

func secretListCommand(g *globals) *cli.Command {
	o := &secretOptions{}
	return &cli.Command{
		Name: "list", Usage: `print the secrets' names as JSON ([{"name","type"}]); never their values`, Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 0 {
				return usageErr("secret list takes no arguments")
			}
			script, err := o.worker()
			if err != nil {
				return err
			}
			s, err := g.openStore()
			if err != nil {
				return err
			}
			sec, _, err := deploy.ReadSecrets(ctx, s, script)
			if err != nil {
				return deployErr(err)
			}
			type entry struct {
				Name string `json:"name"`
				Type string `json:"type"`
			}
			out := []entry{}
			for _, n := range sec.Names() {
				out = append(out, entry{n, "secret_text"})
			}
			return writeJSON(cmd.Root().Writer, out)
		},
	}
}

func secretArg(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 {
		return "", &Error{Err: fmt.Errorf("%s takes one secret NAME, got %q", cmd.Name, cmd.Args().Slice()), Code: ExitUsage,
			Hint: "see " + cmd.FullName() + " --help"}
	}
	name := cmd.Args().First()
	if err := deploy.CheckSecretName(name); err != nil {
		return "", &Error{Err: err, Code: ExitUsage}
	}
	return name, nil
}

// changeSecrets writes the change and deploys it (a new version of the
// live Worker when it is this one).
func (g *globals) changeSecrets(ctx context.Context, errw io.Writer, script string, change func(map[string]string) error) error {
	s, err := g.openStore()
	if err != nil {
		return err
	}
	sec, err := deploy.UpdateSecrets(ctx, s, script, change)
	if err != nil {
		if errors.Is(err, deploy.ErrNoSecret) {
			return err
		}
		return deployErr(err)
	}
	deployed, err := deploy.RepublishSecrets(ctx, s, script, sec)
	if err != nil {
		return deployErr(err)
	}
	if !deployed {
		fmt.Fprintf(errw, "%s is not the fleet's live Worker: its next celld deploy uses the change\n", script)
	}
	return nil
}

// readSecretValue reads a secret's value: at a prompt without echo when
// stdin is a terminal, else all of stdin less one trailing newline.
func readSecretValue(in io.Reader, prompt io.Writer) (string, error) {
	if isTerminal(in) {
		fmt.Fprint(prompt, "Enter a secret value: ")
		b, err := term.ReadPassword(in.(*os.File).Fd())
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the secret value: %w", err)
		}
		return string(b), nil
	}
	b, err := io.ReadAll(io.LimitReader(in, 5<<10+1))
	if err != nil {
		return "", fmt.Errorf("read the secret value: %w", err)
	}
	if len(b) > 5<<10 {
		return "", usageErr("the secret value is larger than 5 KiB, Cloudflare's limit")
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return string(b), nil
}
