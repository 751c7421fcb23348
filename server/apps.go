package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/celldgo/celld/assets"
	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/httpcache"
	"github.com/celldgo/celld/worker"
)

// app is one loaded deployment: its manifest and a runtime for it.
type app struct {
	dep    *deploy.Deployment
	rt     *worker.Runtime
	assets *assets.Router // nil: no assets
}

// apps tracks the fleet's live deployment: it loads deploy/current.json,
// compiles the bundle once, and swaps in a new runtime when the pointer
// changes. Requests in flight finish on the runtime they started on.
type apps struct {
	store   bucket.Store
	log     *slog.Logger
	objects *objects // Durable Object host

	assetCache *assets.Cache
	cache      *httpcache.Cache // the Cache API's store, shared by every version
	// onLoadError, when set, hears once of each deployment that failed to
	// load (the previous one keeps serving).
	onLoadError func(version string, err error)

	// syncCtx bounds the cron syncs of loaded deployments (cron.go); nil:
	// none (a node's, set by Run).
	syncCtx context.Context

	mu            sync.Mutex
	cur           *app
	failed        string // ETag of the current.json whose deployment failed to load
	failedVersion string // its version, and why (shown by /state)
	failedErr     string
}

// loaded names the loaded version ("" when none) and the version that
// failed to load with its error, if the last attempt failed.
func (a *apps) loaded() (version, failedVersion, failedErr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur != nil {
		version = a.cur.dep.Manifest.ScriptName + "@" + a.cur.dep.Manifest.Version
	}
	return version, a.failedVersion, a.failedErr
}

// current returns the live app, or nil when nothing is deployed.
func (a *apps) current() *app {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur
}

// refresh loads the live deployment if it changed since the last load.
func (a *apps) refresh(ctx context.Context) error {
	obj, err := a.store.Head(ctx, deploy.CurrentKey)
	if errors.Is(err, bucket.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", deploy.CurrentKey, err)
	}
	if cur := a.current(); cur != nil && cur.dep.ETag == obj.ETag {
		return nil
	}
	a.mu.Lock()
	failed := a.failed == obj.ETag
	a.mu.Unlock()
	if failed {
		return nil // reported once; the previous version keeps serving
	}
	dep, err := deploy.Current(ctx, a.store)
	if err != nil {
		return err
	}
	if cur := a.current(); cur != nil && cur.dep.Manifest.Version == dep.Manifest.Version {
		a.mu.Lock()
		cur.dep.ETag = dep.ETag
		a.mu.Unlock()
		return nil
	}
	next, err := a.load(ctx, dep)
	if err != nil {
		if a.current() != nil && !errors.Is(err, bucket.ErrUnavailable) {
			a.mu.Lock()
			a.failed = obj.ETag
			a.failedVersion, a.failedErr = dep.Manifest.Version, err.Error()
			a.mu.Unlock()
			if a.onLoadError != nil {
				a.onLoadError(dep.Manifest.Version, err)
			}
		}
		return err
	}
	a.mu.Lock()
	prev := a.cur
	a.cur = next
	a.failedVersion, a.failedErr = "", ""
	a.mu.Unlock()
	a.log.Info("deployment loaded", "worker", dep.Manifest.ScriptName, "version", dep.Manifest.Version)
	if a.objects != nil && a.syncCtx != nil {
		go a.objects.syncCrons(a.syncCtx, next, liveETag(a.store))
	}
	if prev != nil {
		go prev.close(a)
	}
	return nil
}

func (a *apps) load(ctx context.Context, dep *deploy.Deployment) (*app, error) {
	script, err := worker.Compile(dep.Manifest.ScriptName+"/"+dep.Manifest.Main, dep.Code)
	if err != nil {
		return nil, fmt.Errorf("compile %s version %s: %w", dep.Manifest.ScriptName, dep.Manifest.Version, err)
	}
	vars, err := a.withSecrets(ctx, dep)
	if err != nil {
		return nil, err
	}
	cfg := worker.Config{Vars: vars, Logger: a.log,
		Node:           nodeMode(deploy.NodeCompat(dep.Manifest.CompatibilityDate, dep.Manifest.CompatibilityFlags)),
		NodeProcessEnv: deploy.NodeProcessEnv(dep.Manifest.CompatibilityDate, dep.Manifest.CompatibilityFlags)}
	if a.objects != nil {
		a.objects.configure(&cfg, dep)
		cfg.Bindings = a.objects.dataBindings(dep)
	}
	cfg.Services, cfg.ObjectClasses = services(dep.Manifest)
	cfg.Cache = a.cache
	router, err := a.loadAssets(ctx, dep, &cfg)
	if err != nil {
		return nil, err
	}
	rt, err := worker.New(script, cfg)
	if err != nil {
		return nil, fmt.Errorf("start %s version %s: %w", dep.Manifest.ScriptName, dep.Manifest.Version, err)
	}
	ap := &app{dep: dep, rt: rt, assets: router}
	if a.objects != nil {
		a.objects.use(ap)
	}
	return ap, nil
}

func (ap *app) close(a *apps) {
	if a.objects != nil {
		a.objects.retire(ap)
	}
	ctx, cancel := context.WithTimeout(context.Background(), worker.DefaultWaitUntilLimit)
	defer cancel()
	ap.rt.Close(ctx)
}

// watch polls deploy/current.json every interval until ctx ends.
func (a *apps) watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := a.refresh(c); err != nil {
				a.log.Warn("deployment refresh failed", "err", err)
			}
			cancel()
		}
	}
}

// nodeMode is the runtime's name for a deployment's Node.js compatibility.
func nodeMode(m deploy.NodeMode) worker.NodeMode {
	switch m {
	case deploy.NodeALS:
		return worker.NodeALS
	case deploy.NodeV1:
		return worker.NodeV1
	case deploy.NodeV2:
		return worker.NodeV2
	}
	return worker.NodeOff
}

// withSecrets returns the deployment's vars with its secrets added (a
// secret wins over a var of the same name, as on Cloudflare). The values
// are read from the bucket when the version loads; they are never
// logged.
func (a *apps) withSecrets(ctx context.Context, dep *deploy.Deployment) (map[string]any, error) {
	if len(dep.Manifest.Secrets) == 0 {
		return dep.Manifest.Vars, nil
	}
	sec, _, err := deploy.ReadSecrets(ctx, a.store, dep.Manifest.ScriptName)
	if err != nil {
		return nil, err
	}
	vars := make(map[string]any, len(dep.Manifest.Vars)+len(sec.Values))
	for k, v := range dep.Manifest.Vars {
		vars[k] = v
	}
	for k, v := range sec.Values {
		vars[k] = v
	}
	return vars, nil
}

// services are a version's service bindings (to its own entrypoints) and
// the Durable Object classes its ctx.exports holds namespaces for.
func services(m deploy.Manifest) (map[string]worker.Service, []string) {
	var out map[string]worker.Service
	for _, s := range m.Services {
		if out == nil {
			out = map[string]worker.Service{}
		}
		out[s.Binding] = worker.Service{Entrypoint: s.Entrypoint, Props: s.Props}
	}
	return out, m.DurableObjects.Classes
}
