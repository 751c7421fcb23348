// Package wake makes Durable Object alarms durable across the fleet. The
// alarm itself lives in the cell's SQLite database (cell.Alarm); this
// package keeps the bucket's discovery hints for it (the wake/ layout,
// docs/bucket-layout.md) and holds the waker role, which wakes cells whose
// owner is gone when one of their alarms is due.
//
//	wake/format.json                                     {"format":2}
//	wake/waker.json                                      waker-role lease: node, session, expires_ms
//	wake/entries/<YYYY-MM-DDTHH:MM>/<cell>/<epoch:016x>-<seq:016x>
//	                                                     one object per published installation
//	wake/retired/<cell>.json                             retirement frontier: {"epoch","seq"}
//
// A hint never authorizes a handler to run: it only makes a node acquire
// the cell (epoch+1) and read its alarm from SQLite. A published
// installation is named by (epoch, seq) — the ownership epoch and the
// cell's persistent installation sequence — so a key is written once and
// never reused, and deleting an old key can never remove a later
// installation: no conditional DELETE is needed. The retirement record is
// written by the current owner with a conditional write and only moves
// forward; every entry below it is garbage the waker may delete.
//
// The package imports bucket and fleet only; the decisions (which minute
// is due, whether a waker lease may be claimed, what to do with an entry)
// are pure functions tested without I/O.
package wake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Key layout.
const (
	Prefix        = "wake/"
	FormatKey     = "wake/format.json"
	WakerKey      = "wake/waker.json"
	EntriesPrefix = "wake/entries/"
	RetiredPrefix = "wake/retired/"
	// Format is the wake/ format this package reads and writes.
	Format = 2
	// minuteLayout names an entry's minute (UTC); it sorts as time does.
	minuteLayout = "2006-01-02T15:04"
)

// ID names one installation: the ownership epoch it was published at and
// the cell's installation sequence. IDs order by epoch, then sequence.
type ID struct {
	Epoch uint64 `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

// Less reports whether id is older than o.
func (id ID) Less(o ID) bool {
	if id.Epoch != o.Epoch {
		return id.Epoch < o.Epoch
	}
	return id.Seq < o.Seq
}

func (id ID) String() string { return fmt.Sprintf("%016x-%016x", id.Epoch, id.Seq) }

// Entry is one published installation: the cell's alarm is due at
// Deadline (unix ms; a key carries only its minute).
type Entry struct {
	Cell     string
	ID       ID
	Deadline int64  // unix ms (0 when read back from a key)
	Minute   string // the key's minute
}

// Minute is the UTC minute of a unix-ms instant, as entries name it.
func Minute(ms int64) string { return time.UnixMilli(ms).UTC().Format(minuteLayout) }

// Key is the entry's object key.
func (e Entry) Key() string {
	m := e.Minute
	if m == "" {
		m = Minute(e.Deadline)
	}
	return EntriesPrefix + m + "/" + e.Cell + "/" + e.ID.String()
}

// ErrBadKey: a key under wake/entries/ that this format does not name.
var ErrBadKey = errors.New("not a wake entry key")

// ParseKey reads an entry key back.
func ParseKey(key string) (Entry, error) {
	rest, ok := strings.CutPrefix(key, EntriesPrefix)
	if !ok {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	minute, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	if _, err := time.Parse(minuteLayout, minute); err != nil {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	cell, idText := rest[:i], rest[i+1:]
	ep, sq, ok := strings.Cut(idText, "-")
	if !ok || len(ep) != 16 || len(sq) != 16 {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	e, err1 := strconv.ParseUint(ep, 16, 64)
	s, err2 := strconv.ParseUint(sq, 16, 64)
	if err1 != nil || err2 != nil {
		return Entry{}, fmt.Errorf("parse %q: %w", key, ErrBadKey)
	}
	return Entry{Cell: cell, ID: ID{Epoch: e, Seq: s}, Minute: minute}, nil
}

// RetiredKey is the cell's retirement record.
func RetiredKey(cell string) string { return RetiredPrefix + cell + ".json" }

// Retired is a retirement record: every installation older than Below is
// no longer armed, and its entries may be deleted.
type Retired struct {
	Below ID `json:"below"`
}

// formatRecord is wake/format.json.
type formatRecord struct {
	Format int `json:"format"`
}

// WakerLease is wake/waker.json: the advisory lease on the waker role.
type WakerLease struct {
	Node    string `json:"node"`
	Session string `json:"session"`
	Expires int64  `json:"expires_ms"`
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs always encode
	}
	return b
}
