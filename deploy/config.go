package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/celldgo/celld/assets"
	"github.com/celldgo/celld/cron/spec"
)

// Config is a Wrangler project's wrangler.jsonc, wrangler.json or
// wrangler.toml, limited to the keys celld understands. A key outside this
// set stops the deploy: silently ignoring, say, "ai" would deploy a
// Worker that behaves differently from the one the user configured. Keys
// that matter only on Cloudflare's network (cloudflareOnly) are accepted
// and named in one warning.
type Config struct {
	// Schema is the editor hint ("$schema") that Wrangler's templates put
	// at the top; it says nothing about the Worker and is ignored.
	Schema             string         `json:"$schema,omitempty"`
	Name               string         `json:"name"`
	Main               string         `json:"main"`
	CompatibilityDate  string         `json:"compatibility_date,omitempty"`
	CompatibilityFlags []string       `json:"compatibility_flags,omitempty"`
	DurableObjects     DurableObjects `json:"durable_objects"`
	Migrations         []Migration    `json:"migrations,omitempty"`
	Vars               map[string]any `json:"vars,omitempty"`
	D1Databases        []D1Database   `json:"d1_databases,omitempty"`
	KVNamespaces       []KVNamespace  `json:"kv_namespaces,omitempty"`
	R2Buckets          []R2Bucket     `json:"r2_buckets,omitempty"`
	Queues             Queues         `json:"queues"`
	Triggers           Triggers       `json:"triggers"`
	Assets             *assets.Config `json:"assets,omitempty"`
	Services           []Service      `json:"services,omitempty"`
	// UploadSourceMaps bundles with an inline source map, so the stacks
	// a node logs name the project's files and lines.
	UploadSourceMaps bool `json:"upload_source_maps,omitempty"`

	// Env holds the named environments (env.<name>); see ResolveEnv.
	Env map[string]Config `json:"env,omitempty"`

	// EnvName is the environment this config was resolved for ("": the
	// top level). Ignored lists the Cloudflare-only keys present, by
	// path, that celld does not act on. Neither is read from the file.
	EnvName string   `json:"-"`
	Ignored []string `json:"-"`
	Notes   []string `json:"-"` // warnings about the environment's resolution
}

// DurableObjects is the "durable_objects" section.
type DurableObjects struct {
	Bindings []DOBinding `json:"bindings,omitempty"`
}

// DOBinding binds a Durable Object namespace to env.<Name>.
type DOBinding struct {
	Name       string `json:"name"`
	ClassName  string `json:"class_name"`
	ScriptName string `json:"script_name,omitempty"`
}

// Migration is one entry of "migrations", applied in order.
type Migration struct {
	Tag              string         `json:"tag"`
	NewClasses       []string       `json:"new_classes,omitempty"`
	NewSQLiteClasses []string       `json:"new_sqlite_classes,omitempty"`
	RenamedClasses   []RenamedClass `json:"renamed_classes,omitempty"`
	DeletedClasses   []string       `json:"deleted_classes,omitempty"`
}

// RenamedClass is one entry of a migration's "renamed_classes".
type RenamedClass struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// D1Database binds a D1 database to env.<Binding>.
type D1Database struct {
	Binding       string `json:"binding"`
	DatabaseName  string `json:"database_name"`
	DatabaseID    string `json:"database_id"`
	MigrationsDir string `json:"migrations_dir,omitempty"`
	// MigrationsTable is read by celld d1 migrations (default
	// d1_migrations); PreviewDatabaseID and Remote are Wrangler's local
	// development switches, accepted and not used: celld has one fleet.
	MigrationsTable   string `json:"migrations_table,omitempty"`
	PreviewDatabaseID string `json:"preview_database_id,omitempty"`
	Remote            bool   `json:"remote,omitempty"`
}

// KVNamespace binds a KV namespace to env.<Binding>.
type KVNamespace struct {
	Binding string `json:"binding"`
	ID      string `json:"id"`
	// PreviewID is the namespace celld kv --preview addresses; Remote is
	// accepted and not used.
	PreviewID string `json:"preview_id,omitempty"`
	Remote    bool   `json:"remote,omitempty"`
}

// r2BucketName is the bucket names Cloudflare (and Wrangler) accept.
var r2BucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)

// R2Bucket binds an R2 bucket to env.<Binding>.
type R2Bucket struct {
	Binding    string `json:"binding"`
	BucketName string `json:"bucket_name"`
	// PreviewBucketName, Jurisdiction and Remote are accepted and not
	// used: one fleet, one bucket, no preview buckets at run time.
	PreviewBucketName string `json:"preview_bucket_name,omitempty"`
	Jurisdiction      string `json:"jurisdiction,omitempty"`
	Remote            bool   `json:"remote,omitempty"`
}

// Queues is the "queues" section.
type Queues struct {
	Producers []QueueProducer `json:"producers,omitempty"`
	Consumers []QueueConsumer `json:"consumers,omitempty"`
}

// QueueProducer binds a queue to env.<Binding> for sending.
type QueueProducer struct {
	Binding       string `json:"binding"`
	Queue         string `json:"queue"`
	DeliveryDelay *int   `json:"delivery_delay,omitempty"` // seconds
	Remote        bool   `json:"remote,omitempty"`
}

// QueueConsumer makes this Worker's queue handler consume a queue. Absent
// numbers take Cloudflare's defaults when the runtime serves them.
type QueueConsumer struct {
	Queue           string `json:"queue"`
	MaxBatchSize    *int   `json:"max_batch_size,omitempty"`
	MaxBatchTimeout *int   `json:"max_batch_timeout,omitempty"` // seconds
	MaxRetries      *int   `json:"max_retries,omitempty"`
	DeadLetterQueue string `json:"dead_letter_queue,omitempty"`
	MaxConcurrency  *int   `json:"max_concurrency,omitempty"`
	RetryDelay      *int   `json:"retry_delay,omitempty"` // seconds
	Type            string `json:"type,omitempty"`        // "worker" (push); "http_pull" is refused
	// VisibilityTimeoutMS is a pull consumer's; accepted and unused.
	VisibilityTimeoutMS *int `json:"visibility_timeout_ms,omitempty"`
}

// Triggers is the "triggers" section.
type Triggers struct {
	Crons []string `json:"crons,omitempty"`
}

// Capabilities says which binding kinds the runtime that will serve the
// deployment can serve. Variables and Durable Objects are always served.
// A configured binding whose kind is not served stops the deploy: a Worker
// that deploys cleanly and then throws on env.DB at the first request is
// worse than a deploy that refuses.
type Capabilities struct {
	D1       bool // d1_databases
	KV       bool // kv_namespaces
	R2       bool // r2_buckets
	Queues   bool // queues.producers and queues.consumers
	Triggers bool // triggers.crons
}

// Served is what this build of celld's runtime serves. An issue that
// teaches the worker package a binding kind flips its field here.
func Served() Capabilities {
	return Capabilities{D1: true, KV: true, R2: true, Queues: true, Triggers: true}
}

// ConfigNames are the file names a project's config may have, in the order
// they are looked for.
var ConfigNames = []string{"wrangler.jsonc", "wrangler.json", "wrangler.toml"}

var (
	workerName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	// jsIdentifier is the ASCII subset of JavaScript identifiers: a binding
	// name becomes a property of env that users write as env.NAME.
	jsIdentifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
	isoDate      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// LoadConfig finds, parses and validates the config of the project in
// dir. Every problem it finds is reported, as a *ProjectError.
func LoadConfig(dir string, caps Capabilities) (*Config, error) {
	return LoadConfigEnv(dir, "", caps)
}

// LoadConfigEnv is LoadConfig for the named environment env ("": the top
// level), resolved with Wrangler's inheritance rules (ResolveEnv).
func LoadConfigEnv(dir, env string, caps Capabilities) (*Config, error) {
	path, err := findConfig(dir)
	if err != nil {
		return nil, err
	}
	file := filepath.Base(path)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, projectErr("", "read %s: %v", file, unwrapPathErr(err))
	}
	cfg, err := ParseConfigEnv(file, src, env)
	if err != nil {
		return nil, err
	}
	if problems := cfg.validate(dir, caps); len(problems) > 0 {
		pe := &ProjectError{}
		for _, p := range problems {
			pe.Problems = append(pe.Problems, file+": "+p)
		}
		pe.Hint = hintFor(problems)
		return nil, pe
	}
	return cfg, nil
}

func findConfig(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", projectErr("", "project directory %s: %v", dir, unwrapPathErr(err))
	}
	if !st.IsDir() {
		return "", projectErr("", "project directory %s is not a directory", dir)
	}
	var found []string
	for _, n := range ConfigNames {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return filepath.Join(dir, found[0]), nil
	case 0:
		return "", projectErr("", "no %s, %s or %s in %s", ConfigNames[0], ConfigNames[1], ConfigNames[2], dir)
	default:
		return "", projectErr("", "%s exist in %s; keep one", strings.Join(found, " and "), dir)
	}
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decodeStrict decodes exactly one JSON value, keeping numbers exact (a
// var of 9007199254740993 must not become ...992).
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return &trailingDataError{offset: d.InputOffset()}
	}
	return nil
}

type trailingDataError struct{ offset int64 }

func (e *trailingDataError) Error() string { return "unexpected data after the top-level value" }

func decodeErr(file string, src []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var td *trailingDataError
	switch {
	case errors.As(err, &se):
		line, col := position(src, int(se.Offset)-1) // Offset counts the bad byte
		return projectErr("", "%s:%d:%d: %s", file, line, col, strings.TrimPrefix(se.Error(), "json: "))
	case errors.As(err, &td):
		line, col := position(src, int(td.offset))
		return projectErr("", "%s:%d:%d: %v", file, line, col, td)
	case errors.As(err, &te):
		line, col := position(src, int(te.Offset)-1)
		where := te.Field
		if where == "" {
			where = "value"
		}
		return projectErr("", "%s:%d:%d: %s: want %s, got JSON %s", file, line, col, where, jsonKind(te.Type), te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return projectErr("", "%s: empty or truncated JSON", file)
	default:
		return projectErr("", "%s: %v", file, err)
	}
}

// jsonKind names the JSON shape a Go type wants.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	default:
		return t.String()
	}
}

// checkKeys appends to unknown the path of every object key in v that t
// (the Go type v will decode into) does not declare. Keys are visited in
// sorted order so the report is stable.
func checkKeys(path string, v any, t reflect.Type, unknown *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return // a type error, reported by the decoder
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			ft, ok := fields[k]
			if !ok && t == reflect.TypeFor[Config]() && cloudflareOnly[k] {
				continue // accepted, and named in one warning
			}
			if !ok {
				*unknown = append(*unknown, p)
				continue
			}
			checkKeys(p, obj[k], ft, unknown)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			checkKeys(fmt.Sprintf("%s[%d]", path, i), e, t.Elem(), unknown)
		}
	case reflect.Map:
		// env.<name> sections are checked as configs of their own. Other
		// maps (vars) hold user data: any key goes.
		obj, ok := v.(map[string]any)
		if !ok || t.Elem().Kind() != reflect.Struct {
			return
		}
		for _, k := range sortedKeys(obj) {
			checkKeys(path+"."+k, obj[k], t.Elem(), unknown)
		}
	}
}

// jsonFields maps each JSON key of struct type t to its field type. The
// match is exact: encoding/json would also accept "Name" for "name", and a
// key spelled differently from Wrangler's should not pass unnoticed.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		m[name] = f.Type
	}
	return m
}

func acceptedKeys() []string {
	var keys []string
	for k := range jsonFields(reflect.TypeFor[Config]()) {
		if k != "$schema" && k != "env" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// validate reports every problem with a parsed config, each a sentence
// without the file name.
func (c *Config) validate(dir string, caps Capabilities) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }

	switch {
	case c.Name == "":
		add(`"name" is required`)
	case !workerName.MatchString(c.Name):
		add(`name %q: use 1 to 63 lowercase letters, digits and dashes, not starting or ending with a dash`, c.Name)
	}
	switch {
	case c.Main == "":
		add(`"main" is required: the path of the Worker's entry module, e.g. "src/index.ts"`)
	default:
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.Main)))
		switch {
		case err != nil:
			add("main %q does not exist", c.Main)
		case st.IsDir():
			add("main %q is a directory, not a module", c.Main)
		}
	}
	if c.CompatibilityDate != "" && !isoDate.MatchString(c.CompatibilityDate) {
		add("compatibility_date %q: want YYYY-MM-DD", c.CompatibilityDate)
	}

	for _, n := range c.EnvNames() {
		if !workerName.MatchString(n) && !jsIdentifier.MatchString(n) {
			add("env %q: use letters, digits, dashes and underscores", n)
		}
	}
	if c.Assets != nil {
		ps = append(ps, c.Assets.Validate(dir)...)
		if b := c.Assets.Binding; b != "" && !jsIdentifier.MatchString(b) {
			add("assets.binding %q is not a JavaScript identifier", b)
		}
	}
	ps = append(ps, c.validateLimits()...)
	ps = append(ps, c.validateMigrations()...)
	ps = append(ps, c.validateBindings()...)
	ps = append(ps, c.validateServed(caps)...)
	ps = append(ps, c.validateServices()...)
	return ps
}

// liveClasses applies the migrations in order and returns the Durable
// Object classes that exist afterwards, mapped to whether they are
// SQLite-backed (new_sqlite_classes) rather than KV-backed (new_classes).
func (c *Config) liveClasses() map[string]bool {
	live := map[string]bool{}
	for _, m := range c.Migrations {
		for _, n := range m.NewClasses {
			live[n] = false
		}
		for _, n := range m.NewSQLiteClasses {
			live[n] = true
		}
		for _, r := range m.RenamedClasses {
			if sqlite, ok := live[r.From]; ok {
				delete(live, r.From)
				live[r.To] = sqlite
			}
		}
		for _, n := range m.DeletedClasses {
			delete(live, n)
		}
	}
	return live
}

func (c *Config) validateMigrations() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	tags := map[string]bool{}
	live := map[string]bool{}
	for i, m := range c.Migrations {
		at := fmt.Sprintf("migrations[%d]", i)
		switch {
		case m.Tag == "":
			add(`%s: "tag" is required`, at)
		case tags[m.Tag]:
			add("%s: tag %q is used twice", at, m.Tag)
		}
		tags[m.Tag] = true
		for _, n := range slices.Concat(m.NewClasses, m.NewSQLiteClasses) {
			switch {
			case !jsIdentifier.MatchString(n):
				add("%s: class name %q is not a JavaScript identifier", at, n)
			case live[n]:
				add("%s: class %q is created twice", at, n)
			}
			live[n] = true
		}
		for _, r := range m.RenamedClasses {
			switch {
			case !live[r.From]:
				add("%s: renamed_classes: class %q does not exist at this migration", at, r.From)
			case !jsIdentifier.MatchString(r.To):
				add("%s: renamed_classes: class name %q is not a JavaScript identifier", at, r.To)
			case live[r.To]:
				add("%s: renamed_classes: class %q already exists", at, r.To)
			}
			delete(live, r.From)
			live[r.To] = true
		}
		for _, n := range m.DeletedClasses {
			if !live[n] {
				add("%s: deleted_classes: class %q does not exist at this migration", at, n)
			}
			delete(live, n)
		}
	}
	return ps
}

func (c *Config) validateBindings() []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	seen := map[string]string{} // binding name → where it was first bound
	bind := func(at, name string) {
		switch {
		case name == "":
			add("%s: the binding name is required", at)
			return
		case !jsIdentifier.MatchString(name):
			add("%s: binding name %q is not a JavaScript identifier", at, name)
		}
		if first, dup := seen[name]; dup {
			add("%s: binding name %q is already used by %s", at, name, first)
			return
		}
		seen[name] = at
	}

	for _, k := range sortedKeys(c.Vars) {
		bind("vars."+k, k)
	}
	live := c.liveClasses()
	for i, b := range c.DurableObjects.Bindings {
		at := fmt.Sprintf("durable_objects.bindings[%d]", i)
		bind(at, b.Name)
		switch {
		case b.ClassName == "":
			add(`%s: "class_name" is required`, at)
		case reservedClass[b.ClassName]:
			add(`%s (binding %s): class name %q is reserved for celld's built-in cells (%s:<id>); rename the class`, at, b.Name, b.ClassName, b.ClassName)
		case b.ScriptName != "" && b.ScriptName != c.Name:
			add("%s (binding %s): script_name %q names another Worker; celld serves one Worker per fleet, so the class must be exported by this one", at, b.Name, b.ScriptName)
		default:
			if _, ok := live[b.ClassName]; !ok {
				add(`%s (binding %s): class %q is not created by any migration; add {"tag": "v1", "new_sqlite_classes": [%q]} to "migrations"`,
					at, b.Name, b.ClassName, b.ClassName)
			}
		}
	}
	for i, d := range c.D1Databases {
		at := fmt.Sprintf("d1_databases[%d]", i)
		bind(at, d.Binding)
		if d.DatabaseName == "" && d.DatabaseID == "" {
			add(`%s (binding %s): "database_name" or "database_id" is required`, at, d.Binding)
		}
	}
	for i, k := range c.KVNamespaces {
		at := fmt.Sprintf("kv_namespaces[%d]", i)
		bind(at, k.Binding)
		if k.ID == "" {
			add(`%s (binding %s): "id" is required`, at, k.Binding)
		}
	}
	for i, r := range c.R2Buckets {
		at := fmt.Sprintf("r2_buckets[%d]", i)
		bind(at, r.Binding)
		if r.BucketName == "" {
			add(`%s (binding %s): "bucket_name" is required`, at, r.Binding)
		} else if !r2BucketName.MatchString(r.BucketName) {
			// Wrangler's check and text (bucketFormatMessage).
			add(`%s.bucket_name=%q is invalid. Bucket names must begin and end with an alphanumeric character, only contain lowercase letters, numbers, and hyphens, and be between 3 and 63 characters long.`, at, r.BucketName)
		}
	}
	for i, s := range c.Services {
		bind(fmt.Sprintf("services[%d]", i), s.Binding)
	}
	ps = append(ps, c.Queues.validate(bind)...)
	for _, err := range spec.CheckTriggers(c.Triggers.Crons) {
		add("%s", err)
	}
	return ps
}

// validateServed names every configured binding the runtime cannot serve.
func (c *Config) validateServed(caps Capabilities) []string {
	var ps []string
	refuse := func(kind, what string) {
		ps = append(ps, fmt.Sprintf("binding kind %s (%s) is not served by this celld yet", kind, what))
	}
	if !caps.D1 {
		for _, d := range c.D1Databases {
			refuse("d1_databases", "binding "+d.Binding)
		}
	}
	if !caps.KV {
		for _, k := range c.KVNamespaces {
			refuse("kv_namespaces", "binding "+k.Binding)
		}
	}
	if !caps.R2 {
		for _, r := range c.R2Buckets {
			refuse("r2_buckets", "binding "+r.Binding)
		}
	}
	if !caps.Queues {
		for _, p := range c.Queues.Producers {
			refuse("queues.producers", "binding "+p.Binding)
		}
		for _, q := range c.Queues.Consumers {
			refuse("queues.consumers", "queue "+q.Queue)
		}
	}
	if !caps.Triggers {
		for _, cron := range c.Triggers.Crons {
			refuse("triggers.crons", fmt.Sprintf("cron %q", cron))
		}
	}
	return ps
}

// reservedClass are cell-name prefixes of built-in cells; a Durable
// Object class of that name would share their cell names.
var reservedClass = map[string]bool{"d1": true, "kv": true, "queue": true, "cron": true}

func hintFor(problems []string) string {
	for _, p := range problems {
		if strings.Contains(p, "is not served by this celld yet") {
			return "remove the binding, or deploy with a celld release that serves it"
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
