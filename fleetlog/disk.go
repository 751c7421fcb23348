package fleetlog

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet/core"
)

// Disk is the follower side: segments other nodes' sessions sent here,
// retained (each fsynced before it is acknowledged) until the bucket has
// them. Layout under its directory:
//
//	disk-id                                   this disk's identity (a member is node + disk)
//	s/<owner session>/sealed                  the session is sealed: no more appends
//	s/<owner session>/<hex cell>/<epoch:016x>/<min:016x>-<max:016x>.ltx
type Disk struct {
	dir string
	id  string

	mu     sync.Mutex
	sealed map[string]bool
	hi     map[tailKey]uint64 // contiguous reach of each retained range
	known  map[string]bool    // sessions whose ranges were scanned from disk
}

type tailKey struct {
	session, cell string
	epoch         uint64
}

// ErrRefused wraps an append the follower refuses (wrong disk, sealed
// session, a gap).
var ErrRefused = errors.New("append refused")

// OpenDisk opens (creating) the follower directory dir.
func OpenDisk(dir string) (*Disk, error) {
	if err := os.MkdirAll(filepath.Join(dir, "s"), 0o755); err != nil {
		return nil, fmt.Errorf("open fleet log disk: %w", err)
	}
	idPath := filepath.Join(dir, "disk-id")
	id, err := os.ReadFile(idPath)
	if errors.Is(err, os.ErrNotExist) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = []byte(hex.EncodeToString(b[:]))
		if err := writeSynced(idPath, id); err != nil {
			return nil, fmt.Errorf("open fleet log disk: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("open fleet log disk: %w", err)
	}
	return &Disk{dir: dir, id: strings.TrimSpace(string(id)), sealed: map[string]bool{}, hi: map[tailKey]uint64{}, known: map[string]bool{}}, nil
}

// ID is the disk's identity.
func (d *Disk) ID() string { return d.id }

func (d *Disk) sessionDir(session string) string { return filepath.Join(d.dir, "s", session) }

func validSession(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// isSealed reads the seal mark once per session. Call with d.mu held.
func (d *Disk) isSealed(session string) bool {
	if !d.sealed[session] {
		if _, err := os.Stat(filepath.Join(d.sessionDir(session), "sealed")); err == nil {
			d.sealed[session] = true
		}
	}
	return d.sealed[session]
}

// scan loads a session's retained ranges from disk (after a restart).
// Call with d.mu held.
func (d *Disk) scan(session string) {
	if d.known[session] {
		return
	}
	d.known[session] = true
	for _, s := range d.list(session) {
		k := tailKey{session, s.Cell, s.Epoch}
		d.hi[k] = max(d.hi[k], s.Max)
	}
}

// Append retains segs for owner session (addressed to disk to), each
// fsynced, and returns once all are. Idempotent per segment.
func (d *Disk) Append(session, to string, segs []cell.Segment) error {
	if !validSession(session) {
		return fmt.Errorf("%w: bad session %q", ErrRefused, session)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if why := core.AppendRefusal(d.id, to, d.isSealed(session)); why != "" {
		return fmt.Errorf("%w: %s", ErrRefused, why)
	}
	d.scan(session)
	for _, s := range segs {
		k := tailKey{session, s.Cell, s.Epoch}
		hi := max(d.hi[k], s.After)
		if s.Min > hi+1 {
			return fmt.Errorf("%w: %s epoch %d: segment %d-%d leaves a gap after %d", ErrRefused, s.Cell, s.Epoch, s.Min, s.Max, hi)
		}
		dir := filepath.Join(d.sessionDir(session), hex.EncodeToString([]byte(s.Cell)), fmt.Sprintf("%016x", s.Epoch))
		path := filepath.Join(dir, fmt.Sprintf("%016x-%016x.ltx", s.Min, s.Max))
		if _, err := os.Stat(path); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("retain segment: %w", err)
			}
			if err := writeSynced(path, s.Data); err != nil {
				return fmt.Errorf("retain segment: %w", err)
			}
		}
		d.hi[k] = max(hi, s.Max)
	}
	return nil
}

// Trim drops a session's segments of cell at epoch through txid (the
// bucket has them).
func (d *Disk) Trim(session, cellName string, epoch, txid uint64) {
	if !validSession(session) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	dir := filepath.Join(d.sessionDir(session), hex.EncodeToString([]byte(cellName)), fmt.Sprintf("%016x", epoch))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if _, mx, ok := parseSegName(e.Name()); ok && mx <= txid {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Seal marks session sealed (fsynced), after which every append for it is
// refused, and writes every segment it retains for it to w, then the end
// mark. disk must be this disk's identity: another disk cannot vouch for
// what the member held.
func (d *Disk) Seal(session, disk string, w io.Writer) error {
	if !validSession(session) {
		return fmt.Errorf("%w: bad session %q", ErrRefused, session)
	}
	d.mu.Lock()
	if disk != d.id {
		d.mu.Unlock()
		return fmt.Errorf("%w: the member's disk was %s, this node's is %s (lost or replaced)", ErrRefused, disk, d.id)
	}
	if !d.isSealed(session) {
		if err := os.MkdirAll(d.sessionDir(session), 0o755); err != nil {
			d.mu.Unlock()
			return fmt.Errorf("seal session: %w", err)
		}
		if err := writeSynced(filepath.Join(d.sessionDir(session), "sealed"), nil); err != nil {
			d.mu.Unlock()
			return fmt.Errorf("seal session: %w", err)
		}
		d.sealed[session] = true
	}
	segs := d.list(session)
	d.mu.Unlock()
	// Appends are refused from here on, and trims only remove what the
	// bucket has: reading outside the lock is safe.
	for _, s := range segs {
		data, err := os.ReadFile(s.path)
		if errors.Is(err, os.ErrNotExist) {
			continue // trimmed meanwhile: in the bucket
		}
		if err != nil {
			return fmt.Errorf("read retained segment: %w", err)
		}
		s.Data = data
		if err := writeFrame(w, s.Segment); err != nil {
			return err
		}
	}
	return writeEnd(w)
}

// Forget removes everything retained for a sealed session.
func (d *Disk) Forget(session string) {
	if !validSession(session) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.isSealed(session) {
		return // only a sealed session's tails are known to be in the bucket
	}
	dir := d.sessionDir(session)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

type listed struct {
	cell.Segment
	path string
}

// list is every segment retained for session, in cell, epoch, TXID order.
func (d *Disk) list(session string) []listed {
	var out []listed
	base := d.sessionDir(session)
	cells, _ := os.ReadDir(base)
	for _, c := range cells {
		name, err := hex.DecodeString(c.Name())
		if !c.IsDir() || err != nil {
			continue
		}
		epochs, _ := os.ReadDir(filepath.Join(base, c.Name()))
		for _, e := range epochs {
			epoch, err := strconv.ParseUint(e.Name(), 16, 64)
			if err != nil {
				continue
			}
			files, _ := os.ReadDir(filepath.Join(base, c.Name(), e.Name()))
			for _, f := range files {
				mn, mx, ok := parseSegName(f.Name())
				if !ok {
					continue
				}
				out = append(out, listed{Segment: cell.Segment{Cell: string(name), Epoch: epoch, Min: mn, Max: mx},
					path: filepath.Join(base, c.Name(), e.Name(), f.Name())})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Cell != b.Cell {
			return a.Cell < b.Cell
		}
		if a.Epoch != b.Epoch {
			return a.Epoch < b.Epoch
		}
		return a.Min < b.Min || a.Min == b.Min && a.Max < b.Max
	})
	return out
}

// Retained is the bytes and sessions this disk retains for others.
func (d *Disk) Retained() (bytes int64, sessions int) {
	sess, _ := os.ReadDir(filepath.Join(d.dir, "s"))
	for _, s := range sess {
		n := int64(0)
		filepath.WalkDir(filepath.Join(d.dir, "s", s.Name()), func(_ string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(e.Name(), ".ltx") {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		if n > 0 {
			bytes += n
			sessions++
		}
	}
	return bytes, sessions
}

func parseSegName(name string) (mn, mx uint64, ok bool) {
	a, b, found := strings.Cut(strings.TrimSuffix(name, ".ltx"), "-")
	if !found || !strings.HasSuffix(name, ".ltx") || len(a) != 16 || len(b) != 16 {
		return 0, 0, false
	}
	mn, err1 := strconv.ParseUint(a, 16, 64)
	mx, err2 := strconv.ParseUint(b, 16, 64)
	return mn, mx, err1 == nil && err2 == nil && mn >= 1 && mx >= mn
}

// writeSynced writes data to path through a temporary file, fsyncing the
// file and its directory.
func writeSynced(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}
