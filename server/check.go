package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/worker"
)

// CheckDeployable loads a built version the way a node does — the bundle
// compiled and evaluated in an isolate with the version's vars and Node.js
// mode — and checks that it can serve: top-level code runs, every module
// it requires is there, the default export is an object with handlers or
// a class, and every Durable Object class the config names is exported as
// a class. `celld deploy` calls it before it writes anything: a version
// that cannot start would otherwise make every node that restarts onto it
// exit, taking a fleet down in a rolling restart.
func CheckDeployable(b *deploy.Build) error {
	m := b.Manifest
	script, err := worker.Compile(m.ScriptName+"/"+m.Main, b.Code)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	vars := map[string]any{}
	for k, v := range m.Vars {
		vars[k] = v
	}
	for _, name := range m.Secrets {
		if _, ok := vars[name]; !ok {
			vars[name] = "" // the value is the node's to read; only its presence matters here
		}
	}
	cfg := worker.Config{
		Vars: vars, Isolates: 1, Logger: slog.New(slog.DiscardHandler), TaskTimeout: 10 * time.Second,
		Node:           nodeMode(deploy.NodeCompat(m.CompatibilityDate, m.CompatibilityFlags)),
		NodeProcessEnv: deploy.NodeProcessEnv(m.CompatibilityDate, m.CompatibilityFlags),
	}
	rt, err := worker.New(script, cfg)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		rt.Close(ctx)
	}()
	if err := rt.CheckStartable(m.DurableObjects.Classes); err != nil {
		return err
	}
	return rt.CheckEntrypoints(m.Entrypoints())
}
