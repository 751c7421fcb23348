// Package worker is celld's JavaScript runtime: it runs a Worker's bundled
// script on goja, one isolate per goroutine, with the Web APIs and the
// cloudflare:workers module that Workers code expects.
//
// What it decides: how a script is compiled (once) and instantiated (once
// per isolate), how requests are spread over isolates, how each isolate's
// event loop orders microtasks, timers and work finished in Go, and how a
// JavaScript Response becomes a Go Response.
//
// Durable Objects live here too (objects*.go): namespace bindings, ids
// and stubs in every isolate (Config.DurableObjects), and NewObject, which
// runs one object in an isolate of its own on a cell.DB it is handed, with
// the structured-clone wire format (wire.go) for RPC and storage values.
//
// What it deliberately does not know: buckets, listeners, how cells are
// activated, owned or replicated, or the fleet. Objects are found through
// Config.Objects (an ObjectHost the server implements); KV, D1 and the
// rest reach a script only through Config.Bindings.
//
// Threading rule: a goja.Runtime is never touched by two goroutines. Every
// isolate owns one goroutine (its loop); everything that touches its VM runs
// there, and other goroutines only post closures to it.
package worker
