package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/celldgo/celld/assets"
	"github.com/celldgo/celld/assets/assetsjs"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/worker"
)

// newAssetCache makes the node's bounded on-disk asset cache: dir and
// maxBytes from the options, else CELLD_ASSET_CACHE_DIR and
// CELLD_ASSET_CACHE_BYTES, else beside the state directory and 512 MiB.
func newAssetCache(a *apps, o Options) (*assets.Cache, error) {
	dir, max := o.AssetCacheDir, o.AssetCacheBytes
	if dir == "" {
		dir = os.Getenv("CELLD_ASSET_CACHE_DIR")
	}
	if dir == "" {
		dir = filepath.Join(filepath.Dir(filepath.Clean(o.StateDir)), "asset-cache-"+o.Node)
	}
	if max == 0 {
		if v := os.Getenv("CELLD_ASSET_CACHE_BYTES"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("CELLD_ASSET_CACHE_BYTES %q: want a positive number of bytes", v)
			}
			max = n
		}
	}
	return assets.NewCache(a.store, dir, max)
}

// loadAssets reads a version's asset index and makes its router, and adds
// the env binding when the config names one.
func (a *apps) loadAssets(ctx context.Context, dep *deploy.Deployment, cfg *worker.Config) (*assets.Router, error) {
	ma := dep.Manifest.Assets
	if ma == nil {
		return nil, nil
	}
	idx, err := assets.LoadIndex(ctx, a.store, dep.Prefix+assets.IndexName, ma.Index)
	if err != nil {
		return nil, err
	}
	rt, err := assets.NewRouter(idx, dep.Manifest.CompatibilityDate, dep.Manifest.CompatibilityFlags)
	if err != nil {
		return nil, fmt.Errorf("asset rules of %s: %w", dep.Manifest.Version, err)
	}
	if ma.Binding != "" && a.assetCache != nil {
		if cfg.Bindings == nil {
			cfg.Bindings = map[string]worker.Binding{}
		}
		h := &assets.Handler{Cache: a.assetCache}
		cfg.Bindings[ma.Binding] = assetsjs.Binding(func(ctx context.Context, r *http.Request) *http.Response {
			return h.Fetch(ctx, rt, r)
		})
	}
	return rt, nil
}

// serveAssets answers a request from the deployment's assets when
// Cloudflare's routing says so, without entering JavaScript. It reports
// false when the Worker must answer.
func (s *node) serveAssets(w http.ResponseWriter, r *http.Request, ap *app) bool {
	if ap.assets == nil || s.apps.assetCache == nil {
		return false
	}
	d := ap.assets.Route(r.Method, r.URL.Path, r.Header, true)
	if d.Kind == assets.ToWorker {
		return false
	}
	h := assets.Handler{Cache: s.apps.assetCache}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	h.Write(ctx, w, r, ap.assets, d)
	return true
}
