package server

import (
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/worker"
)

// objects hosts Durable Object cells on this node. (Filled in with the
// Durable Object runtime: activation through fleet.Acquire, one SQLite file
// per cell, idle eviction.)
type objects struct{}

func (o *objects) bindings(dep *deploy.Deployment) map[string]worker.Binding { return nil }
func (o *objects) use(ap *app)                                               {}
func (o *objects) retire(ap *app)                                            {}
