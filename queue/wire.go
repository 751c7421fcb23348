package queue

import "encoding/json"

// The cell's wire format: one JSON request in, one JSON answer out;
// bodies travel as base64 (encoding/json's []byte).

// Ops of a request.
const (
	opSend      = "send"         // messages -> metrics
	opSendGroup = "send_group"   // groups of messages, one transaction -> metrics, refused (per group)
	opConfigure = "configure"    // config (nil: no consumer)
	opLease     = "lease"        // -> batch (maybe empty), next due
	opSettle    = "settle"       // lease, outcomes
	opTakeDead  = "take_dead"    // -> exhausted messages waiting to move to their dead-letter queue
	opDropDead  = "drop_dead"    // ids moved
	opInfo      = "info"         // -> Info
	opPeek      = "peek"         // limit -> messages
	opPurge     = "purge"        // -> purged count
	opPause     = "pause"        // paused bool
	opTakeDLQ   = "take_redrive" // limit -> dead-lettered messages with their source
	opDrop      = "drop"         // ids: delete (after a redrive)
)

type request struct {
	Op       string      `json:"op"`
	Messages []Message   `json:"messages,omitempty"`
	Config   *Config     `json:"config,omitempty"`
	Lease    string      `json:"lease,omitempty"`
	LeaseMS  int64       `json:"lease_ms,omitempty"`
	Outcomes []Outcome   `json:"outcomes,omitempty"`
	IDs      []string    `json:"ids,omitempty"`
	Limit    int         `json:"limit,omitempty"`
	Paused   bool        `json:"paused,omitempty"`
	Max      int         `json:"max,omitempty"`
	Groups   [][]Message `json:"groups,omitempty"`
}

// Message is one message: as sent (Body, ContentType, DelaySeconds) and
// as stored and delivered (ID, Timestamp, Attempts).
type Message struct {
	ID           string `json:"id,omitempty"`
	Body         []byte `json:"body"`
	ContentType  string `json:"content_type"`
	DelaySeconds *int64 `json:"delay_seconds,omitempty"`
	Timestamp    int64  `json:"timestamp,omitempty"` // unix ms it was sent
	Attempts     int    `json:"attempts,omitempty"`  // deliveries, this one included
	// Source is the queue a dead-lettered message came from; DeadTo the
	// dead-letter queue an exhausted one is moving to.
	Source string `json:"source,omitempty"`
	DeadTo string `json:"dead_to,omitempty"`
}

// Config is a queue's consumer, as the deployment declares it (seconds as
// in wrangler.jsonc).
type Config struct {
	Script          string `json:"script,omitempty"`
	MaxBatchSize    int    `json:"max_batch_size"`
	MaxBatchTimeout int    `json:"max_batch_timeout"`
	MaxRetries      int    `json:"max_retries"`
	RetryDelay      int    `json:"retry_delay"`
	MaxConcurrency  int    `json:"max_concurrency,omitempty"` // 0: as many as it takes
	DeadLetterQueue string `json:"dead_letter_queue,omitempty"`
}

// Outcome settles one leased message: acked, or retried after Delay
// seconds (nil: the consumer's retry_delay).
type Outcome struct {
	ID    string `json:"id"`
	Retry bool   `json:"retry,omitempty"`
	Delay *int64 `json:"delay,omitempty"`
}

// Metrics are what send and sendBatch resolve to
// ({metadata: {metrics: …}}) and what info reports.
type Metrics struct {
	BacklogCount           int64 `json:"backlogCount"`
	BacklogBytes           int64 `json:"backlogBytes"`
	OldestMessageTimestamp int64 `json:"oldestMessageTimestamp"` // unix ms; 0: empty
}

// Batch is a leased batch: deliver it, then settle every message under
// Lease.
type Batch struct {
	Lease    string    `json:"lease,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Metrics  Metrics   `json:"metrics"`
}

// Info is a queue's state for `celld queue info`.
type Info struct {
	Queue    string  `json:"queue"`
	Paused   bool    `json:"delivery_paused"`
	Messages int64   `json:"messages"` // stored, waiting or leased
	Ready    int64   `json:"ready"`
	Delayed  int64   `json:"delayed"`
	Leased   int64   `json:"leased"`
	Dead     int64   `json:"dead_letter_pending"` // exhausted, moving to the DLQ
	DLQ      int64   `json:"dead_lettered"`       // dead-lettered here from other queues
	Bytes    int64   `json:"backlog_bytes"`
	Oldest   int64   `json:"oldest_message_timestamp,omitempty"`
	Consumer *Config `json:"consumer,omitempty"`
	NextDue  int64   `json:"next_due_ms,omitempty"`
}

type answer struct {
	Metrics  *Metrics  `json:"metrics,omitempty"`
	Batch    *Batch    `json:"batch,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	Info     *Info     `json:"info,omitempty"`
	Count    int64     `json:"count,omitempty"`
	// Refused is a send_group's verdict per group: "" stored, else the
	// limit it broke.
	Refused []string `json:"refused,omitempty"`
}

func encode(v any) ([]byte, error) { return json.Marshal(v) }
