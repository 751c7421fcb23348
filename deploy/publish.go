package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/celldgo/celld/bucket"
)

// Keys and numbers of the deployment records (docs/bucket-layout.md).
const (
	// CurrentKey names the fleet's live deployment.
	CurrentKey = "deploy/current.json"
	// ManifestFormat is the manifest's "format"; a reader refuses others.
	ManifestFormat = 1
	// MainModule is the module name of the bundle.
	MainModule = "index.js"
	// flipAttempts bounds how often a deploy re-reads current.json after
	// losing the race to flip it.
	flipAttempts = 5
)

// ErrNoDeployment: deploy/current.json does not exist; nothing was ever
// deployed to this bucket.
var ErrNoDeployment = errors.New("no deployment")

// Manifest is the normalized config stored beside the bundle as
// deploy/<script>/<version>/manifest.json: what the runtime needs to serve
// the version, and nothing of the project's layout on disk.
type Manifest struct {
	Format             int                    `json:"format"`
	ScriptName         string                 `json:"script_name"`
	Version            string                 `json:"version,omitempty"` // empty while hashing
	Main               string                 `json:"main"`              // module name under the version prefix
	CompatibilityDate  string                 `json:"compatibility_date,omitempty"`
	CompatibilityFlags []string               `json:"compatibility_flags,omitempty"`
	Vars               map[string]any         `json:"vars,omitempty"`
	DurableObjects     ManifestDurableObjects `json:"durable_objects"`
	Migrations         []Migration            `json:"migrations,omitempty"`
	D1Databases        []D1Database           `json:"d1_databases,omitempty"`
	KVNamespaces       []KVNamespace          `json:"kv_namespaces,omitempty"`
	R2Buckets          []R2Bucket             `json:"r2_buckets,omitempty"`
	Queues             *Queues                `json:"queues,omitempty"`
	Triggers           *Triggers              `json:"triggers,omitempty"`
	Assets             *ManifestAssets        `json:"assets,omitempty"`
	Services           []Service              `json:"services,omitempty"`
	// Secrets are the names (never the values) of the fleet's secrets
	// for this Worker when it was deployed; nodes read the values from
	// the bucket (secrets.go).
	Secrets []string `json:"secrets,omitempty"`
	// SecretsGeneration is the secrets object's generation when the
	// version was made: a changed secret makes a new version.
	SecretsGeneration string `json:"secrets_generation,omitempty"`
}

// ManifestAssets says where a version's asset index is (IndexName under
// the version prefix), its SHA-256, and the env binding that fetches
// assets ("" for none).
type ManifestAssets struct {
	Index   string `json:"index_sha256"`
	Binding string `json:"binding,omitempty"`
}

// ManifestDurableObjects is the manifest's view of Durable Objects: the
// bindings, and the classes that exist once every migration has run.
type ManifestDurableObjects struct {
	Bindings      []DOBinding `json:"bindings"`
	Classes       []string    `json:"classes"`        // every live class, sorted
	SQLiteClasses []string    `json:"sqlite_classes"` // those created by new_sqlite_classes
}

// NewManifest normalizes a validated config. It leaves Version empty.
func NewManifest(c *Config) Manifest {
	m := Manifest{
		Format:             ManifestFormat,
		ScriptName:         c.Name,
		Main:               MainModule,
		CompatibilityDate:  c.CompatibilityDate,
		CompatibilityFlags: c.CompatibilityFlags,
		Vars:               c.Vars,
		Migrations:         c.Migrations,
		D1Databases:        c.D1Databases,
		KVNamespaces:       c.KVNamespaces,
		R2Buckets:          c.R2Buckets,
		Services:           c.Services,
		DurableObjects: ManifestDurableObjects{
			Bindings: []DOBinding{}, Classes: []string{}, SQLiteClasses: []string{},
		},
	}
	for _, b := range c.DurableObjects.Bindings {
		// Validation allows script_name only when it names this Worker.
		m.DurableObjects.Bindings = append(m.DurableObjects.Bindings, DOBinding{Name: b.Name, ClassName: b.ClassName})
	}
	live := c.liveClasses()
	for _, n := range sortedKeys(live) {
		m.DurableObjects.Classes = append(m.DurableObjects.Classes, n)
		if live[n] {
			m.DurableObjects.SQLiteClasses = append(m.DurableObjects.SQLiteClasses, n)
		}
	}
	if len(c.Queues.Producers)+len(c.Queues.Consumers) > 0 {
		q := c.Queues
		m.Queues = &q
	}
	if len(c.Triggers.Crons) > 0 {
		t := c.Triggers
		m.Triggers = &t
	}
	return m
}

// Version is the content hash that names a deployment: the first 16 hex
// digits of SHA-256 over the manifest (without its version) and the code.
// The same project deploys to the same version from any machine, so an
// identical redeploy writes nothing.
func Version(m Manifest, code []byte) string {
	m.Version = ""
	mj, err := json.Marshal(m)
	if err != nil {
		// Only vars could fail to encode, and they were decoded from JSON.
		panic(fmt.Sprintf("deploy: encode manifest: %v", err))
	}
	h := sha256.New()
	h.Write(mj)
	h.Write([]byte{'\n'}) // compact JSON holds no raw newline: the split is unambiguous
	h.Write(code)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// VersionPrefix is the key prefix of one version's objects.
func VersionPrefix(script, version string) string {
	return "deploy/" + script + "/" + version + "/"
}

// Published describes what Publish did.
type Published struct {
	Version   string
	Prefix    string
	Unchanged bool // the version existed and was already live: nothing written
}

// Publish writes the version's objects — the code, then manifest.json,
// which marks the version complete — and then makes it live by flipping
// deploy/current.json: create-if-absent the first time, compare-and-swap
// on its ETag after that. A version whose manifest is already stored is
// not written again, and a flip to the version already live writes
// nothing, so an identical redeploy is a no-op. A lost race for the flip
// is retried on a fresh read a few times (the last deploy wins, as if the
// two had run one after the other).
func Publish(ctx context.Context, s bucket.Store, name string, m Manifest, code []byte) (Published, error) {
	if !workerName.MatchString(name) {
		return Published{}, fmt.Errorf("publish: invalid script name %q", name)
	}
	m.ScriptName, m.Format = name, ManifestFormat
	if m.Main == "" {
		m.Main = MainModule
	}
	m.Version = Version(m, code)
	p := Published{Version: m.Version, Prefix: VersionPrefix(name, m.Version)}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return p, fmt.Errorf("encode manifest: %w", err)
	}
	mj = append(mj, '\n')

	wrote, err := putVersion(ctx, s, p.Prefix, m.Main, mj, code)
	if err != nil {
		return p, err
	}
	flipped, err := flipCurrent(ctx, s, pointer{ScriptName: name, Version: m.Version, Prefix: p.Prefix})
	if err != nil {
		return p, err
	}
	p.Unchanged = !wrote && !flipped
	return p, nil
}

// putVersion stores the version's code and manifest unless an identical
// manifest is already there. It reports whether it wrote anything.
func putVersion(ctx context.Context, s bucket.Store, prefix, main string, manifest, code []byte) (bool, error) {
	mkey, ckey := prefix+"manifest.json", prefix+main
	old, _, err := s.Get(ctx, mkey)
	switch {
	case err == nil && sameJSON(old, manifest):
		// The manifest is written last, so the code is there too — unless
		// someone deleted it by hand; restoring it costs one HEAD.
		if _, err := s.Head(ctx, ckey); errors.Is(err, bucket.ErrNotFound) {
			return true, putSettled(ctx, s, ckey, code)
		} else if err != nil {
			return false, fmt.Errorf("check %s: %w", ckey, err)
		}
		return false, nil
	case err != nil && !errors.Is(err, bucket.ErrNotFound):
		return false, fmt.Errorf("read %s: %w", mkey, err)
	}
	// Missing, or different from what the version's own hash says it
	// holds (damaged by hand): the objects are a function of the version,
	// so writing them is always right.
	if err := putSettled(ctx, s, ckey, code); err != nil {
		return false, err
	}
	if err := putSettled(ctx, s, mkey, manifest); err != nil {
		return false, err
	}
	return true, nil
}

// putSettled is a plain PUT whose ambiguous outcome is settled by reading
// the object back.
func putSettled(ctx context.Context, s bucket.Store, key string, data []byte) error {
	_, err := s.Put(ctx, key, data, bucket.Cond{})
	if errors.Is(err, bucket.ErrAmbiguous) {
		if got, _, rerr := s.Get(ctx, key); rerr == nil && bytes.Equal(got, data) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

// pointer is deploy/current.json.
type pointer struct {
	ScriptName string `json:"script_name"`
	Version    string `json:"version"`
	Prefix     string `json:"prefix"`
}

// flipCurrent makes p the live deployment. It reports whether it changed
// deploy/current.json. Fields of the record that celld does not know are
// kept (a CAS rewrites the whole record, and other tools may add some).
func flipCurrent(ctx context.Context, s bucket.Store, p pointer) (bool, error) {
	maybeWrote := false // an ambiguous write may have landed
	for range flipAttempts {
		data, obj, err := s.Get(ctx, CurrentKey)
		cond := bucket.IfAbsent()
		rec := map[string]json.RawMessage{}
		switch {
		case errors.Is(err, bucket.ErrNotFound):
		case err != nil:
			return false, fmt.Errorf("read %s: %w", CurrentKey, err)
		default:
			cond = bucket.IfMatch(obj.ETag)
			var cur pointer
			if json.Unmarshal(data, &cur) == nil && cur == p {
				return maybeWrote, nil
			}
			// An unreadable record is replaced whole, still by CAS.
			if json.Unmarshal(data, &rec) != nil {
				rec = map[string]json.RawMessage{}
			}
		}
		_, err = s.Put(ctx, CurrentKey, encodePointer(p, rec), cond)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, bucket.ErrRejected):
			// Another deploy moved it first: read again and move it on.
		case errors.Is(err, bucket.ErrAmbiguous):
			maybeWrote = true // the next read settles it
		default:
			return false, fmt.Errorf("flip %s (%s): %w", CurrentKey, cond, err)
		}
	}
	return false, fmt.Errorf("flip %s: lost the race %d times; is another deploy running?", CurrentKey, flipAttempts)
}

// encodePointer writes the known fields in the documented order, then any
// others in key order.
func encodePointer(p pointer, rec map[string]json.RawMessage) []byte {
	var b bytes.Buffer
	q := func(s string) []byte { j, _ := json.Marshal(s); return j }
	b.WriteString(`{"script_name":`)
	b.Write(q(p.ScriptName))
	b.WriteString(`,"version":`)
	b.Write(q(p.Version))
	b.WriteString(`,"prefix":`)
	b.Write(q(p.Prefix))
	for _, k := range sortedKeys(rec) {
		if k == "script_name" || k == "version" || k == "prefix" {
			continue
		}
		b.WriteByte(',')
		b.Write(q(k))
		b.WriteByte(':')
		b.Write(rec[k])
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// Deployment is the fleet's live deployment, as a node loads it.
type Deployment struct {
	Manifest Manifest
	Code     []byte // the module Manifest.Main: the CommonJS bundle
	Prefix   string // where the version's objects live
	ETag     string // of deploy/current.json: a node polls it to notice a flip
}

// Current reads deploy/current.json and then the manifest and code it
// points to. No record is ErrNoDeployment.
func Current(ctx context.Context, s bucket.Store) (*Deployment, error) {
	data, obj, err := s.Get(ctx, CurrentKey)
	if errors.Is(err, bucket.ErrNotFound) {
		return nil, fmt.Errorf("read %s: %w", CurrentKey, ErrNoDeployment)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", CurrentKey, err)
	}
	var p pointer
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decode %s: %w", CurrentKey, err)
	}
	if p.Prefix == "" || !strings.HasSuffix(p.Prefix, "/") {
		return nil, fmt.Errorf("%s: prefix %q is not a key prefix ending in /", CurrentKey, p.Prefix)
	}
	dep, err := loadVersion(ctx, s, p, CurrentKey)
	if err != nil {
		return nil, err
	}
	dep.ETag = obj.ETag
	return dep, nil
}

// loadVersion reads the manifest and code of the version p names (from
// the record named by, for errors).
func loadVersion(ctx context.Context, s bucket.Store, p pointer, by string) (*Deployment, error) {
	mkey := p.Prefix + "manifest.json"
	mj, _, err := s.Get(ctx, mkey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", mkey, err)
	}
	var m Manifest
	d := json.NewDecoder(bytes.NewReader(mj))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", mkey, err)
	}
	switch {
	case m.Format != ManifestFormat:
		return nil, fmt.Errorf("%s: manifest format %d is not known to this celld (want %d)", mkey, m.Format, ManifestFormat)
	case m.ScriptName != p.ScriptName || m.Version != p.Version:
		return nil, fmt.Errorf("%s: holds %s version %s, but %s names %s version %s", mkey, m.ScriptName, m.Version, by, p.ScriptName, p.Version)
	case m.Main == "" || bucket.CheckKey(p.Prefix+m.Main) != nil:
		return nil, fmt.Errorf("%s: main %q is not a module name", mkey, m.Main)
	}
	ckey := p.Prefix + m.Main
	code, _, err := s.Get(ctx, ckey)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ckey, err)
	}
	return &Deployment{Manifest: m, Code: code, Prefix: p.Prefix}, nil
}
