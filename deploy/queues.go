package deploy

import (
	"fmt"
	"regexp"
)

// Queues' deploy-time bounds (Cloudflare's; package queue holds the same
// limits for the data plane, which this package may not import).
const (
	queueMaxDelay       = 86400
	queueMaxBatchSize   = 100
	queueMaxTimeout     = 60
	queueMaxRetries     = 100
	queueMaxConcurrency = 250
)

// queueName is the rule for a queue name (and so its cell's id).
var queueName = regexp.MustCompile(`^[A-Za-z0-9_.]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9_.])?$`)

// validate checks the queues section: every key Cloudflare accepts, with
// its bounds, and one consumer per queue.
func (q Queues) validate(bind func(at, name string)) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	name := func(at, field, n string) {
		if n != "" && !queueName.MatchString(n) {
			add(`%s.%s=%q is not a valid queue name (1-63 characters of A-Z a-z 0-9 - _ ., not starting or ending with -)`, at, field, n)
		}
	}
	bound := func(at, field string, v *int, lo, hi int) {
		if v != nil && (*v < lo || *v > hi) {
			add("%s.%s=%d is out of range: it must be between %d and %d", at, field, *v, lo, hi)
		}
	}
	for i, p := range q.Producers {
		at := fmt.Sprintf("queues.producers[%d]", i)
		bind(at, p.Binding)
		if p.Queue == "" {
			add(`%s (binding %s): "queue" is required`, at, p.Binding)
		}
		name(at, "queue", p.Queue)
		bound(at, "delivery_delay", p.DeliveryDelay, 0, queueMaxDelay)
	}
	seen := map[string]int{}
	for i, c := range q.Consumers {
		at := fmt.Sprintf("queues.consumers[%d]", i)
		if c.Queue == "" {
			add(`%s: "queue" is required`, at)
		}
		name(at, "queue", c.Queue)
		if j, dup := seen[c.Queue]; dup && c.Queue != "" {
			add(`%s: queue %q already has a consumer (queues.consumers[%d]); a queue has exactly one consumer`, at, c.Queue, j)
		} else {
			seen[c.Queue] = i
		}
		switch c.Type {
		case "", "worker":
		case "http_pull":
			add(`%s: "type": "http_pull" (pull consumers) is not served by celld; use a Worker consumer`, at)
		default:
			add(`%s: "type" must be "worker" or "http_pull", not %q`, at, c.Type)
		}
		bound(at, "max_batch_size", c.MaxBatchSize, 1, queueMaxBatchSize)
		bound(at, "max_batch_timeout", c.MaxBatchTimeout, 0, queueMaxTimeout)
		bound(at, "max_retries", c.MaxRetries, 0, queueMaxRetries)
		bound(at, "max_concurrency", c.MaxConcurrency, 1, queueMaxConcurrency)
		bound(at, "retry_delay", c.RetryDelay, 0, queueMaxDelay)
		bound(at, "visibility_timeout_ms", c.VisibilityTimeoutMS, 0, 12*3600*1000)
		name(at, "dead_letter_queue", c.DeadLetterQueue)
		if c.DeadLetterQueue != "" && c.DeadLetterQueue == c.Queue {
			add(`%s: dead_letter_queue %q is the queue itself`, at, c.DeadLetterQueue)
		}
	}
	return ps
}
