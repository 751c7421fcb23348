// Package worker is celld's JavaScript runtime: it runs a Worker's bundled
// script on goja, one isolate per goroutine, with the Web APIs and the
// cloudflare:workers module that Workers code expects.
//
// What it decides: how a script is compiled (once) and instantiated (once
// per isolate), how requests are spread over isolates, how each isolate's
// event loop orders microtasks, timers and work finished in Go, and how a
// JavaScript Response becomes a Go Response.
//
// What it deliberately does not know: buckets, listeners, cells or the
// fleet. Durable Objects, KV, D1 and the rest reach a script only through
// Config.Bindings, which the caller fills in.
//
// Threading rule: a goja.Runtime is never touched by two goroutines. Every
// isolate owns one goroutine (its loop); everything that touches its VM runs
// there, and other goroutines only post closures to it.
package worker
