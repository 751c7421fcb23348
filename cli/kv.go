package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/kv"
)

// celld kv key get|put|delete|list and kv bulk put|get|delete: Wrangler's
// `wrangler kv` commands, flags and formats, on the fleet's namespaces.
// Each command reaches the namespace's cell like the fleet does
// (cellCaller): over signed peer HTTP to a live owner, or under this
// command's own tool lease.

// kvNamespaceOptions pick the namespace, as Wrangler's --binding and
// --namespace-id do.
type kvNamespaceOptions struct {
	Binding     string
	NamespaceID string
	Preview     bool
	Config      string // wrangler.jsonc or wrangler.json; default: found in Cwd
	Env         string
	Cwd         string
}

func (o *kvNamespaceOptions) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "binding", Usage: "the namespace's binding name in the project's kv_namespaces", Destination: &o.Binding},
		&cli.StringFlag{Name: "namespace-id", Usage: "the namespace's id", Destination: &o.NamespaceID},
		&cli.BoolFlag{Name: "preview", Usage: "use the binding's preview_id", Destination: &o.Preview},
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "the Wrangler config file (default: wrangler.jsonc or wrangler.json in --cwd)", Destination: &o.Config},
		&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "read kv_namespaces from env.NAME of the config", Destination: &o.Env},
		&cli.StringFlag{Name: "cwd", Usage: "the project directory", Value: ".", Destination: &o.Cwd},
		// Accepted for Wrangler compatibility: celld always works on the
		// fleet's namespaces.
		&cli.BoolFlag{Name: "local", Hidden: true},
		&cli.BoolFlag{Name: "remote", Hidden: true},
	}
}

var kvNamespaceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)

// resolve returns the namespace id and how log lines name it.
func (o *kvNamespaceOptions) resolve(cmd *cli.Command) (id, display string, err error) {
	if (o.Binding == "") == (o.NamespaceID == "") {
		return "", "", &Error{Err: errors.New("Exactly one of the arguments binding and namespace-id is required"),
			Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
	}
	if o.NamespaceID != "" {
		id, display = o.NamespaceID, o.NamespaceID
	} else {
		if id, err = o.fromConfig(cmd.IsSet("preview")); err != nil {
			return "", "", err
		}
		display = fmt.Sprintf("binding: %q (id: %q)", o.Binding, id)
	}
	if !kvNamespaceIDPattern.MatchString(id) || id == "." || id == ".." {
		return "", "", usageErr("namespace id %q: want 1 to 200 of [A-Za-z0-9._-]", id)
	}
	return id, display, nil
}

// fromConfig finds the binding in the project's kv_namespaces, with
// Wrangler's rules for id and preview_id. Only kv_namespaces is read: a
// config that celld deploy would refuse still names its namespaces.
func (o *kvNamespaceOptions) fromConfig(previewSet bool) (string, error) {
	path := findConfig(o.Cwd, o.Config)
	if path == "" {
		return "", &Error{Err: errors.New("--binding specified, but no config file was found."), Code: ExitUsage,
			Hint: "run in the project directory (or pass --cwd DIR or --config FILE), or use --namespace-id"}
	}
	cfg, err := projectConfig(path, o.Env)
	if err != nil {
		return "", err
	}
	list := cfg.KVNamespaces // an env's own: bindings are not inherited
	if len(list) == 0 {
		return "", usageErr("No KV Namespaces configured! Either use --namespace-id to upload directly or add a KV namespace to your wrangler config file.")
	}
	var found *deploy.KVNamespace
	for i := range list {
		if list[i].Binding == o.Binding {
			found = &list[i]
		}
	}
	switch {
	case found == nil:
		return "", usageErr("A namespace with binding name %q was not found in the configured \"kv_namespaces\".", o.Binding)
	case o.Preview && found.PreviewID != "":
		return found.PreviewID, nil
	case o.Preview:
		return "", usageErr("No preview ID found for %s. Add one to your wrangler config file to use a separate namespace for previewing your worker.", o.Binding)
	case previewSet && found.ID != "": // --preview=false
		return found.ID, nil
	case previewSet:
		return "", usageErr("No namespace ID found for %s. Add one to your wrangler config file to use a separate namespace for previewing your worker.", o.Binding)
	case found.ID != "" && found.PreviewID != "":
		return "", usageErr("%s has both a namespace ID and a preview ID. Specify \"--preview\" or \"--preview false\" to avoid writing data to the wrong namespace.", o.Binding)
	case found.ID != "":
		return found.ID, nil
	default:
		return found.PreviewID, nil
	}
}

// withNamespace runs fn with a client of the namespace, and releases what
// reaching it took (a tool lease) even when fn fails or is interrupted.
func (g *globals) withNamespace(ctx context.Context, id string, fn func(*kv.Client) error) error {
	return g.withCaller(ctx, func(c caller) error { return fn(kv.NewClient(c, id)) })
}

func kvCommand(g *globals) *cli.Command {
	root := &cli.Command{
		Name:  "kv",
		Usage: "read and write Workers KV namespaces (Wrangler's kv key and kv bulk commands)",
		Commands: []*cli.Command{
			{
				Name:  "key",
				Usage: "one key at a time",
				Commands: []*cli.Command{
					kvKeyPutCommand(g), kvKeyGetCommand(g), kvKeyDeleteCommand(g), kvKeyListCommand(g),
				},
			},
			{
				Name:  "bulk",
				Usage: "many keys from a JSON file (Wrangler's bulk formats)",
				Commands: []*cli.Command{
					kvBulkPutCommand(g), kvBulkGetCommand(g), kvBulkDeleteCommand(g),
				},
			},
		},
	}
	// urfave/cli does not inherit OnUsageError: set it down the tree.
	var walk func(*cli.Command)
	walk = func(c *cli.Command) {
		c.OnUsageError = onUsageError
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	walk(root)
	return root
}

const kvExitCodes = "Exit 0: done; 2: bad input (flags, config, file) or the bucket cannot be reached;\n" +
	"1: the namespace refused the request or the store failed."

// kvErr maps a namespace's refusal (or a failure to reach it) to an exit.
func kvErr(err error) error {
	var ke *kv.Error
	if errors.As(err, &ke) {
		return &Error{Err: err, Code: ExitFailure}
	}
	return reachErr(err)
}
