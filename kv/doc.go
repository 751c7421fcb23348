// Package kv is Workers KV on celld: a namespace is a built-in cell
// (kv:<namespace id>) whose SQLite database holds the pairs, and this
// package is everything that touches it — the cell handler (Handle), the
// env binding scripts use (Binding), a Go client for commands (Client), and
// Wrangler's bulk file formats (ParseBulkPut, ParseBulkKeys).
//
// It decides the storage layout (tables kv_entries and kv_chunks), when a
// pair has expired (at its expiration second, on the package clock; expired
// pairs are invisible to reads and lists and are purged lazily by writes),
// the limits (those of Cloudflare's KV, with the texts workerd and Wrangler
// print) and how a batch is applied (one transaction per request).
//
// It deliberately does not route: a Caller delivers requests to whichever
// node owns the namespace's cell, and that node applies the output gate.
// Nor does it emulate KV's eventual consistency: a write is visible to every
// later read, everywhere, because there is one writer per cell.
package kv
