package server

import (
	"context"
	"fmt"
)

// outputGate holds a Durable Object's outbound fetch() until the object's
// writes are durable and its ownership confirmed (worker.Config.OutputGate):
// the same gate its responses pass.
func (o *objects) outputGate(ctx context.Context, class, id string) error {
	o.mu.Lock()
	r := o.residents[class+":"+id]
	o.mu.Unlock()
	if r == nil {
		return fmt.Errorf("%s:%s is no longer resident here", class, id)
	}
	return r.gate(ctx)
}
