package kv

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/celldgo/celld/cell"
)

// CellName is the built-in cell holding a namespace.
func CellName(namespaceID string) string { return "kv:" + namespaceID }

// Client reaches one namespace through a Caller (the node's router, or a
// command's peer connection or tool lease). Each method is one request,
// so each is atomic on its own.
type Client struct {
	c    cell.Caller
	cell string
}

// NewClient returns a client of the namespace namespaceID.
func NewClient(c cell.Caller, namespaceID string) *Client {
	return &Client{c: c, cell: CellName(namespaceID)}
}

func (c *Client) call(ctx context.Context, r request) (answer, error) {
	var a answer
	req, err := encode(r)
	if err != nil {
		return a, fmt.Errorf("encode kv request: %w", err)
	}
	res, err := c.c.Call(ctx, c.cell, req)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(res, &a); err != nil {
		return a, fmt.Errorf("decode kv answer: %w", err)
	}
	return a, nil
}

// Get reads one pair; Found is false when the key is absent or expired.
func (c *Client) Get(ctx context.Context, key string) (Entry, error) {
	a, err := c.call(ctx, request{Op: opGet, Pair: Pair{Key: key}})
	if err != nil {
		return Entry{Key: key}, err
	}
	if a.Entry == nil {
		return Entry{Key: key}, fmt.Errorf("decode kv answer: no entry")
	}
	return *a.Entry, nil
}

// GetBulk reads up to MaxBulkGetKeys pairs in one request, one Entry per
// key in order.
func (c *Client) GetBulk(ctx context.Context, keys []string) ([]Entry, error) {
	a, err := c.call(ctx, request{Op: opGetBulk, Keys: keys})
	if err != nil {
		return nil, err
	}
	if len(a.Entries) != len(keys) {
		return nil, fmt.Errorf("decode kv answer: %d entries for %d keys", len(a.Entries), len(keys))
	}
	return a.Entries, nil
}

// Put writes one pair.
func (c *Client) Put(ctx context.Context, p Pair) error {
	_, err := c.call(ctx, request{Op: opPut, Pair: p})
	return err
}

// PutBatch writes up to MaxBatchPairs pairs as one transaction: all of
// them or, on error, none.
func (c *Client) PutBatch(ctx context.Context, pairs []Pair) error {
	_, err := c.call(ctx, request{Op: opPutBatch, Pairs: pairs})
	return err
}

// Delete deletes one key; deleting an absent key is not an error.
func (c *Client) Delete(ctx context.Context, key string) error {
	_, err := c.call(ctx, request{Op: opDelete, Pair: Pair{Key: key}})
	return err
}

// DeleteBatch deletes up to MaxBatchPairs keys as one transaction.
func (c *Client) DeleteBatch(ctx context.Context, keys []string) error {
	_, err := c.call(ctx, request{Op: opDeleteBatch, Keys: keys})
	return err
}

// ListOptions select a page of keys. Limit 0 means MaxListLimit.
type ListOptions struct {
	Prefix string
	Cursor string
	Limit  int
}

// List returns one page of keys.
func (c *Client) List(ctx context.Context, o ListOptions) (ListResult, error) {
	a, err := c.call(ctx, request{Op: opList, Prefix: o.Prefix, Cursor: o.Cursor, Limit: o.Limit})
	if err != nil {
		return ListResult{}, err
	}
	if a.List == nil {
		return ListResult{}, fmt.Errorf("decode kv answer: no list")
	}
	return *a.List, nil
}

// ListAll follows cursors until the listing is complete.
func (c *Client) ListAll(ctx context.Context, prefix string) ([]ListedKey, error) {
	var out []ListedKey
	o := ListOptions{Prefix: prefix}
	for {
		page, err := c.List(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Keys...)
		if page.ListComplete {
			return out, nil
		}
		o.Cursor = page.Cursor
	}
}
