package worker

import "context"

// Context is the context of the isolate's outgoing calls: the runtime's
// (or, in a Durable Object's isolate, the object's), cancelled when the
// runtime closes. It is not a request's: ctx.waitUntil work that calls a
// binding after the response still runs under it.
func (h *Host) Context() context.Context { return h.iso.ctx }
