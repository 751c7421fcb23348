// Package core is the fleet's pure decision core: node leases, cell
// ownership and epochs, self-fencing. State in, event in, effects out.
//
// It has no clock (time arrives in milliseconds on events), no goroutines,
// no randomness and no I/O: every read and conditional write is an effect
// with an op id, answered later by a Done event. That is what lets the
// simulator (package sim) drive it through millions of schedules, and what
// a test enforces by rejecting imports of time, os, net, sync and math/rand.
//
// It decides when to renew, when to fence, whether a cell may be taken and
// at which epoch. It does not decide what a cell does once started, nor how
// requests are routed: the executor and the server do.
package core

import (
	"encoding/json"
	"fmt"
)

// Key layout (docs/bucket-layout.md).
const (
	FormatKey   = "fleet/format.json"
	PeerAuthKey = "fleet/peer-auth.json"
	NodesPrefix = "nodes/"
	CellsPrefix = "cells/"
)

// LeaseKey is the node lease record of node.
func LeaseKey(node string) string { return NodesPrefix + node + ".json" }

// OwnKey is the ownership record of cell.
func OwnKey(cell string) string { return CellsPrefix + cell + "/own.json" }

// Lease kinds.
const (
	KindNode = "node" // celld serve
	KindTool = "tool" // a CLI command owning a cell briefly
)

// Lease is nodes/<node>.json.
type Lease struct {
	Node       string `json:"node"`
	Session    string `json:"session"`
	Advertise  string `json:"advertise"`
	Expires    int64  `json:"expires"` // unix ms, the published expiry
	Generation uint64 `json:"generation"`
	Version    string `json:"version"`
	Started    int64  `json:"started"` // unix ms
	Kind       string `json:"kind"`
	// TTL is the lifetime in ms this record's expiry was computed with
	// (Expires is the renewal's issue time plus TTL on the owner's clock).
	// Peers observe a generation unchanged for this long, not for their
	// own TTL, before counting the owner dead: the fleet may mix TTLs.
	// 0 in records written before it was published.
	TTL int64 `json:"ttl,omitempty"`
	// Durability is the node's CELLD_DURABILITY ("" from a node that
	// predates it: bucket). Every node of a fleet runs the same.
	Durability string `json:"durability,omitempty"`
}

// Own is cells/<cell>/own.json.
type Own struct {
	Node     string `json:"node"`
	Session  string `json:"session"`
	Epoch    uint64 `json:"epoch"`
	Released bool   `json:"released"`
}

// Encode renders a record.
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode record: %v", err)) // records are plain structs
	}
	return b
}

// DecodeLease parses a lease record and checks its required fields.
func DecodeLease(b []byte) (Lease, error) {
	var l Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("decode node lease: %w", err)
	}
	if l.Node == "" || l.Session == "" {
		return l, fmt.Errorf("decode node lease: missing node or session")
	}
	return l, nil
}

// DecodeOwn parses an ownership record and checks its required fields.
func DecodeOwn(b []byte) (Own, error) {
	var o Own
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("decode ownership record: %w", err)
	}
	if o.Node == "" || o.Session == "" || o.Epoch == 0 {
		return o, fmt.Errorf("decode ownership record: missing node, session or epoch")
	}
	return o, nil
}
