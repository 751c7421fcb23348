package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

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
	type ns struct {
		Binding   string `json:"binding"`
		ID        string `json:"id"`
		PreviewID string `json:"preview_id"`
	}
	type section struct {
		KVNamespaces []ns `json:"kv_namespaces"`
	}
	var cfg struct {
		section
		Env map[string]section `json:"env"`
	}
	if err := readConfigSection(path, &cfg); err != nil {
		return "", err
	}
	list := cfg.KVNamespaces
	if o.Env != "" {
		list = cfg.Env[o.Env].KVNamespaces // not inherited by environments
	}
	if len(list) == 0 {
		return "", usageErr("No KV Namespaces configured! Either use --namespace-id to upload directly or add a KV namespace to your wrangler config file.")
	}
	var found *ns
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
func (g *globals) withNamespace(ctx context.Context, id string, fn func(*kv.Client) error) (err error) {
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		return reachErr(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := done(dctx); derr != nil && err == nil {
			err = reachErr(derr)
		}
	}()
	return fn(kv.NewClient(c, id))
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

// kvErr maps a namespace's refusal (or a failure to reach it) to an exit.
func kvErr(err error) error {
	var ke *kv.Error
	if errors.As(err, &ke) {
		return &Error{Err: err, Code: ExitFailure}
	}
	return reachErr(err)
}

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

type kvBulkGetOptions struct {
	kvNamespaceOptions
	JSON bool
}

func kvBulkGetCommand(g *globals) *cli.Command {
	o := &kvBulkGetOptions{}
	return &cli.Command{
		Name:      "get",
		Usage:     "print the values of the keys of a JSON file: [\"key\", ...] or [{\"name\": \"key\"}, ...]",
		ArgsUsage: "FILE",
		Description: "Prints {\"<key>\": {\"value\": <text or null>}, ...}, a blank line and \"Success!\" (as Wrangler);\n" +
			"--json prints the object alone.\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.BoolFlag{Name: "json", Usage: "print only the JSON object", Destination: &o.JSON},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv bulk get takes one FILE, got %d arguments", cmd.Args().Len())
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
			w := cmd.Root().Writer
			if err := kv.WriteBulkGet(w, entries); err != nil {
				return err
			}
			if !o.JSON {
				if _, err = fmt.Fprintln(w); err == nil {
					err = success(w)
				}
			}
			return err
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

func kvCapLines(lines []string) string {
	if len(lines) > kv.MaxListedProblems {
		lines = append(lines[:kv.MaxListedProblems:kv.MaxListedProblems], "...")
	}
	return strings.Join(lines, "\n")
}

// kvProgress writes Wrangler's progress lines; on a terminal it redraws one
// line with a bar instead.
type kvProgress struct {
	w    io.Writer
	verb string
	tty  bool
	drew bool
}

func newKVProgress(w io.Writer, verb string) *kvProgress {
	f, ok := w.(*os.File)
	return &kvProgress{w: w, verb: verb, tty: ok && isTerminal(f)}
}

func (p *kvProgress) update(done, total int) {
	line := kv.ProgressLine(p.verb, done, total)
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	const width = 30
	n := width
	if total > 0 {
		n = width * done / total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s", strings.Repeat("█", n), strings.Repeat("░", width-n), line)
	p.drew = true
}

func (p *kvProgress) finish() {
	if p.drew {
		fmt.Fprintln(p.w)
		p.drew = false
	}
}
