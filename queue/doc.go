// Package queue is Cloudflare Queues on celld: each queue is the built-in
// cell queue:<name>, whose SQLite database holds the queue's messages, its
// leases and its delivery state. This package is the data plane, shared
// by the producer binding (queue/queuejs), the node's delivery loop
// (package server) and `celld queue`: the cell's handler (Handle), a
// client over a cell.Caller (Client), and the rules of delivery —
// batching by size and timeout, leases, retries with delay, max_retries,
// dead-lettering — as pure functions of the cell's rows and a clock.
//
// At-least-once: send answers only after the message's commit passed the
// output gate (the host does that for every built-in request); a batch is
// leased to the consumer before it runs, and a lease that ends without a
// settlement (the consumer's node died, the handler hung) counts as a
// failed delivery. The cell's alarm (cell.DB.SetAlarm) is always the next
// instant something is due — a batch to form, a delayed message to become
// visible, a lease to expire — so the node's alarm machinery (local timer,
// wake entry in the bucket, the waker) brings a queue back after its owner
// dies.
//
// It runs no JavaScript: bodies are opaque bytes tagged with a content
// type.
package queue

import (
	"fmt"
	"strings"

	"github.com/celldgo/celld/host"
)

// Kind registers queues as built-in cells: queue:<queue name>.
var Kind = host.Kind{Name: "queue", Handler: Handle, CheckID: CheckName}

// CellName is the built-in cell holding queue name.
func CellName(name string) string { return "queue:" + name }

// NameOf is the queue name of a cell name, and whether it is a queue.
func NameOf(cell string) (string, bool) { return strings.CutPrefix(cell, "queue:") }

// CheckName refuses names Cloudflare refuses for a queue (and that could
// not name a cell): 1-63 characters of a-z 0-9 and -, starting and ending
// with a letter or digit. Upper case and dots are accepted too, since
// Wrangler projects use them and the cell id rule allows them.
func CheckName(name string) error {
	bad := name == "" || len(name) > 63 || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-")
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("invalid queue name %q: use 1-63 characters of a-z A-Z 0-9 - _ . (not starting or ending with -)", name)
	}
	return nil
}

// Limits (Cloudflare's, docs/compatibility.md for where workerd differs).
const (
	MaxMessageBytes   = 128000 // one message's body
	MaxBatchMessages  = 100    // sendBatch
	MaxBatchBytes     = 256000 // one sendBatch's bodies together
	MaxDelaySeconds   = 86400  // delaySeconds, delivery_delay, retry_delay
	MaxBatchSize      = 100    // max_batch_size
	MaxBatchTimeout   = 60     // max_batch_timeout, seconds
	MaxRetries        = 100    // max_retries
	MaxConcurrency    = 250    // max_concurrency
	DefaultBatchSize  = 10
	DefaultTimeoutSec = 5
	DefaultRetries    = 3
	MaxPeek           = 100
	DefaultPeek       = 10
	MaxRedrive        = 100
)

// Content types of a message body.
const (
	ContentJSON  = "json"
	ContentText  = "text"
	ContentBytes = "bytes"
	ContentV8    = "v8"
)

// ValidContentType reports a content type a message may have.
func ValidContentType(ct string) bool {
	switch ct {
	case ContentJSON, ContentText, ContentBytes, ContentV8:
		return true
	}
	return false
}
