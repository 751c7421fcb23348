package deploy

import (
	"errors"

	"github.com/celldgo/celld/assets"
)

// scanAssets reads the project's asset directory, checks its rules and
// records the index's digest (and the binding) in m, so the version hash
// covers every asset. nil when the project has no assets.
func scanAssets(dir string, cfg *Config, m *Manifest) (*assets.Scanned, error) {
	if cfg.Assets == nil {
		return nil, nil
	}
	s, err := assets.Scan(dir, *cfg.Assets)
	if err != nil {
		var se *assets.ScanError
		if errors.As(err, &se) {
			return nil, &ProjectError{Problems: se.Problems}
		}
		return nil, projectErr("", "%v", err)
	}
	if err := assets.CheckRules(s.Index); err != nil {
		return nil, projectErr("", "assets: %v", err)
	}
	_, digest, err := s.Index.Encode()
	if err != nil {
		return nil, err
	}
	m.Assets = &ManifestAssets{Index: digest, Binding: cfg.Assets.Binding}
	return s, nil
}
