package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/celldgo/celld/bucket"
)

// VersionInfo is one published version of the fleet's Worker.
type VersionInfo struct {
	Script   string    `json:"script"`
	Version  string    `json:"version"`
	Uploaded time.Time `json:"uploaded"` // when its manifest was first written
	Current  bool      `json:"current"`
}

// ErrNoVersion is wrapped when a version asked for is not in the bucket.
var ErrNoVersion = errors.New("no such version")

// currentPointer reads deploy/current.json.
func currentPointer(ctx context.Context, s bucket.Store) (pointer, error) {
	data, _, err := s.Get(ctx, CurrentKey)
	if errors.Is(err, bucket.ErrNotFound) {
		return pointer{}, fmt.Errorf("read %s: %w", CurrentKey, ErrNoDeployment)
	}
	if err != nil {
		return pointer{}, fmt.Errorf("read %s: %w", CurrentKey, err)
	}
	var p pointer
	if err := json.Unmarshal(data, &p); err != nil {
		return pointer{}, fmt.Errorf("decode %s: %w", CurrentKey, err)
	}
	return p, nil
}

// Versions lists the published versions of the live Worker, newest
// upload first, marking the live one. A version is a content hash, so an
// unchanged redeploy adds none.
func Versions(ctx context.Context, s bucket.Store) ([]VersionInfo, error) {
	cur, err := currentPointer(ctx, s)
	if err != nil {
		return nil, err
	}
	prefix := "deploy/" + cur.ScriptName + "/"
	objs, err := bucket.ListAll(ctx, s, prefix)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", prefix, err)
	}
	var out []VersionInfo
	for _, o := range objs {
		v, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix), "/manifest.json")
		if !ok || v == "" || strings.Contains(v, "/") {
			continue
		}
		out = append(out, VersionInfo{Script: cur.ScriptName, Version: v, Uploaded: o.Modified, Current: v == cur.Version})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Uploaded.Equal(out[j].Uploaded) {
			return out[i].Uploaded.After(out[j].Uploaded)
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// Rollback makes an earlier version of the live Worker the fleet's live
// deployment: version, or, when it is "", the newest version uploaded
// before the live one. The version is loaded and, when check is set,
// checked as a deploy would be, then deploy/current.json is flipped by
// compare-and-swap like any deploy.
func Rollback(ctx context.Context, s bucket.Store, version string, check func(*Build) error) (VersionInfo, error) {
	versions, err := Versions(ctx, s)
	if err != nil {
		return VersionInfo{}, err
	}
	var target *VersionInfo
	for i, v := range versions {
		if version == "" && v.Current && i+1 < len(versions) {
			target = &versions[i+1]
			break
		}
		if version != "" && v.Version == version {
			target = &versions[i]
			break
		}
	}
	switch {
	case target == nil && version == "":
		return VersionInfo{}, fmt.Errorf("roll back: %w: no version was uploaded before the live one", ErrNoVersion)
	case target == nil:
		return VersionInfo{}, fmt.Errorf("roll back to %s: %w (celld deploy --list shows the versions)", version, ErrNoVersion)
	case target.Current:
		return *target, nil
	}
	p := pointer{ScriptName: target.Script, Version: target.Version, Prefix: VersionPrefix(target.Script, target.Version)}
	dep, err := loadVersion(ctx, s, p, "the rollback")
	if err != nil {
		return VersionInfo{}, fmt.Errorf("roll back to %s: %w", target.Version, err)
	}
	if check != nil {
		if err := check(&Build{Manifest: dep.Manifest, Code: dep.Code}); err != nil {
			return VersionInfo{}, &ProjectError{Problems: []string{fmt.Sprintf("version %s does not start: %v", target.Version, err)},
				Hint: "a node would refuse to load it; the live version is unchanged"}
		}
	}
	if _, err := flipCurrent(ctx, s, p); err != nil {
		return VersionInfo{}, err
	}
	target.Current = true
	return *target, nil
}
