package kv

import (
	"context"
	"fmt"
	"strconv"
)

// batchBudget bounds the encoded size of one bulk request. It stays under
// the 100 MiB a node accepts on its peer route (and the REST API's 100 MB)
// with room for the request's framing.
const batchBudget = 96 << 20

// encodedSize is an upper bound on a pair's share of an encoded request:
// a key escaped at worst 6 bytes a byte, the value in base64, metadata as
// is, plus field names and punctuation.
func encodedSize(p Pair) int {
	return 6*len(p.Key) + (len(p.Value)+2)/3*4 + len(p.Metadata) + 128
}

// PutBatches splits pairs into bulk requests of at most MaxBatchPairs pairs
// and batchBudget encoded bytes, in order.
func PutBatches(pairs []Pair) [][]Pair {
	var out [][]Pair
	start, size := 0, 0
	for i, p := range pairs {
		n := encodedSize(p)
		if i > start && (i-start == MaxBatchPairs || size+n > batchBudget) {
			out = append(out, pairs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(pairs) {
		out = append(out, pairs[start:])
	}
	return out
}

// Progress is told how many items have landed after each request.
type Progress func(done, total int)

// PutAll writes pairs in PutBatches, one request — one transaction on the
// namespace — per batch, in order, and reports progress after each. An
// interruption leaves whole batches; writing the same pairs again is
// harmless. It returns the number of requests sent.
func (c *Client) PutAll(ctx context.Context, pairs []Pair, progress Progress) (requests int, err error) {
	done := 0
	for _, b := range PutBatches(pairs) {
		if err := c.PutBatch(ctx, b); err != nil {
			// Pairs before done are written; this batch is all or
			// nothing, but an interrupted request may have landed.
			return requests, fmt.Errorf("write pairs %d to %d of %d (the %d before them are written; writing the same pairs again is safe): %w",
				done, done+len(b)-1, len(pairs), done, err)
		}
		requests++
		done += len(b)
		if progress != nil {
			progress(done, len(pairs))
		}
	}
	return requests, nil
}

// DeleteAll deletes keys in batches of MaxBatchPairs, one transaction each.
func (c *Client) DeleteAll(ctx context.Context, keys []string, progress Progress) (requests int, err error) {
	for start := 0; start < len(keys); start += MaxBatchPairs {
		b := keys[start:min(start+MaxBatchPairs, len(keys))]
		if err := c.DeleteBatch(ctx, b); err != nil {
			return requests, fmt.Errorf("delete keys %d to %d: %w", start, start+len(b)-1, err)
		}
		requests++
		if progress != nil {
			progress(start+len(b), len(keys))
		}
	}
	return requests, nil
}

// GetAll reads keys in requests of MaxBulkGetKeys, one Entry per key.
func (c *Client) GetAll(ctx context.Context, keys []string) ([]Entry, error) {
	out := make([]Entry, 0, len(keys))
	for start := 0; start < len(keys); start += MaxBulkGetKeys {
		es, err := c.GetBulk(ctx, keys[start:min(start+MaxBulkGetKeys, len(keys))])
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// ProgressLine is Wrangler's progress text, e.g. "Uploaded 40% (4,000
// out of 10,000)"; verb is "Uploaded" or "Deleted".
func ProgressLine(verb string, done, total int) string {
	pct := 100
	if total > 0 {
		pct = 100 * done / total
	}
	return fmt.Sprintf("%s %d%% (%s out of %s)", verb, pct, grouped(done), grouped(total))
}

// grouped formats n with thousands separators (en-US).
func grouped(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + grouped(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
