package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/celldgo/celld/bucket"
)

// Secrets are a Worker's secret values, one object per Worker at
// SecretsKey (docs/bucket-layout.md). Anyone who can read the bucket can
// read them: bucket credentials are fleet-admin credentials. Values never
// enter a manifest, a log line or command output; manifests record the
// names and the generation only.
type Secrets struct {
	Format     int               `json:"format"`
	Generation string            `json:"generation"` // random, new on every change
	Values     map[string]string `json:"values"`
}

// SecretsKey is the bucket key of script's secrets.
func SecretsKey(script string) string { return "secrets/" + script + ".json" }

// secretName is what Wrangler accepts as a secret name: it becomes a
// property of env.
var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckSecretName says why name cannot be a secret's name, or nil.
func CheckSecretName(name string) error {
	if !secretName.MatchString(name) {
		return fmt.Errorf("secret name %q: use letters, digits and underscores, not starting with a digit", name)
	}
	return nil
}

// ReadSecrets reads script's secrets and the object's ETag ("" when there
// are none).
func ReadSecrets(ctx context.Context, s bucket.Store, script string) (*Secrets, string, error) {
	b, obj, err := s.Get(ctx, SecretsKey(script))
	if errors.Is(err, bucket.ErrNotFound) {
		return &Secrets{Format: 1, Values: map[string]string{}}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read secrets of %s: %w", script, err)
	}
	var sec Secrets
	if err := json.Unmarshal(b, &sec); err != nil {
		return nil, "", fmt.Errorf("decode secrets of %s: %w", script, err) // never the bytes: they are secret
	}
	if sec.Format != 1 {
		return nil, "", fmt.Errorf("secrets of %s: format %d, this celld reads 1", script, sec.Format)
	}
	if sec.Values == nil {
		sec.Values = map[string]string{}
	}
	return &sec, obj.ETag, nil
}

// Names are the secret names, sorted.
func (s *Secrets) Names() []string { return sortedKeys(s.Values) }

// ErrNoSecret: delete of a secret that does not exist.
var ErrNoSecret = errors.New("no such secret")

// UpdateSecrets applies change to script's secrets with a compare-and-swap
// (retried on a lost race) and gives them a new generation. It returns
// the secrets as written.
func UpdateSecrets(ctx context.Context, s bucket.Store, script string, change func(values map[string]string) error) (*Secrets, error) {
	for range flipAttempts {
		sec, etag, err := ReadSecrets(ctx, s, script)
		if err != nil {
			return nil, err
		}
		if err := change(sec.Values); err != nil {
			return nil, err
		}
		gen := make([]byte, 8)
		rand.Read(gen)
		sec.Format, sec.Generation = 1, hex.EncodeToString(gen)
		b, err := json.Marshal(sec)
		if err != nil {
			return nil, fmt.Errorf("encode secrets: %w", err)
		}
		cond := bucket.IfAbsent()
		if etag != "" {
			cond = bucket.IfMatch(etag)
		}
		_, err = s.Put(ctx, SecretsKey(script), b, cond)
		if errors.Is(err, bucket.ErrRejected) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("write secrets of %s: %w", script, err)
		}
		return sec, nil
	}
	return nil, fmt.Errorf("write secrets of %s: lost the race %d times", script, flipAttempts)
}

// RepublishSecrets makes the live deployment pick up a change to its
// secrets, as wrangler secret put deploys a new version: when script is
// the live Worker, its manifest is published again with the secrets'
// names and generation (same code, a new version). It reports whether it
// did.
func RepublishSecrets(ctx context.Context, s bucket.Store, script string, sec *Secrets) (bool, error) {
	dep, err := Current(ctx, s)
	if errors.Is(err, ErrNoDeployment) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if dep.Manifest.ScriptName != script {
		return false, nil
	}
	m := dep.Manifest
	m.Secrets, m.SecretsGeneration = sec.Names(), sec.Generation
	if len(m.Secrets) == 0 {
		m.Secrets = nil
	}
	if slices.Equal(m.Secrets, dep.Manifest.Secrets) && m.SecretsGeneration == dep.Manifest.SecretsGeneration {
		return false, nil
	}
	if m.Assets != nil {
		// The index lives under the version prefix: copy it to the new one.
		b, _, err := s.Get(ctx, dep.Prefix+"assets.json")
		if err != nil {
			return false, fmt.Errorf("read the asset index: %w", err)
		}
		m.Version = Version(m, dep.Code)
		if _, err := s.Put(ctx, VersionPrefix(script, m.Version)+"assets.json", b, bucket.Cond{}); err != nil {
			return false, fmt.Errorf("copy the asset index: %w", err)
		}
	}
	if _, err := Publish(ctx, s, script, m, dep.Code); err != nil {
		return false, err
	}
	return true, nil
}
