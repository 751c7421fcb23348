package fleetlog

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet/core"
)

// Disk is the follower side: segments other nodes' sessions sent here,
// retained (fsynced before each append is answered) until the bucket has
// them. Layout under its directory:
//
//	disk-id                  this disk's identity (a member is node + disk)
//	s/<owner session>/log    the session's segments, appended: per record
//	                         u32 length | u32 CRC-32C | frame (wire.go)
//	s/<owner session>/sealed the session is sealed: no more appends
//
// One fsync per append (the log file exists after the first), shared by
// the appends that wait for it at once (group commit: an append answers
// once an fsync that began after its write completed). A torn or
// corrupt tail (a crash mid-append: never acknowledged) is cut off when
// the log is next opened. Trims are kept in memory: after a restart a
// seal returns segments the bucket already has too, which is harmless
// (the same objects again).
type Disk struct {
	dir string
	id  string
	// GapWait overrides DefaultGapWait (set before the first Append).
	GapWait time.Duration
	// CompactAt overrides DefaultCompactAt (set before the first Append).
	CompactAt int64

	mu       sync.Mutex
	sessions map[string]*sessionLog
}

type sessionLog struct {
	f       *os.File
	size    int64
	sealed  bool
	hi      map[tailKey]uint64 // contiguous reach of each retained range
	trimmed map[tailKey]uint64
	live    int64 // bytes of records not trimmed
	index   []recordRef
	byKey   map[tailKey][]int // each cell epoch's records: positions in index, in order
	trimAt  map[tailKey]int   // how many of byKey[k] are trimmed
	gen     uint64            // bumped when the file is emptied
	failed  error             // an fsync failed: the file cannot vouch for its writes any more
	grown   chan struct{}     // closed when the ranges grow (or the session is sealed)

	smu       sync.Mutex // one fsync at a time; held without d.mu
	syncedGen uint64
	synced    int64 // the file is durable through this offset (at syncedGen)
}

type recordRef struct {
	key      tailKey
	min, max uint64
	off      int64
	n        int64
}

type tailKey struct {
	cell  string
	epoch uint64
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

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
	return &Disk{dir: dir, id: strings.TrimSpace(string(id)), sessions: map[string]*sessionLog{}}, nil
}

// ID is the disk's identity.
func (d *Disk) ID() string { return d.id }

func (d *Disk) sessionDir(session string) string { return filepath.Join(d.dir, "s", session) }

func validSession(s string) bool {
	if s == "" || len(s) > 128 || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// session opens (create: creating) a session's log, reading what it holds
// and cutting a torn tail. Call with d.mu held.
func (d *Disk) session(session string, create bool) (*sessionLog, error) {
	if sl := d.sessions[session]; sl != nil {
		return sl, nil
	}
	dir := d.sessionDir(session)
	sl := &sessionLog{hi: map[tailKey]uint64{}, trimmed: map[tailKey]uint64{}}
	if _, err := os.Stat(filepath.Join(dir, "sealed")); err == nil {
		sl.sealed = true
	}
	path := filepath.Join(dir, "log")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if !create {
			d.sessions[session] = sl
			return sl, nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := writeSynced(path, nil); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	sl.f = f
	var off int64
	err = scanLog(f, func(s cell.Segment, at, n int64) {
		k := tailKey{s.Cell, s.Epoch}
		sl.hi[k] = max(sl.hi[k], s.Max)
		sl.addRef(recordRef{key: k, min: s.Min, max: s.Max, off: at, n: n})
		off = at + n
	})
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > off {
		// A torn or corrupt tail: never acknowledged. Cut it.
		if err := f.Truncate(off); err != nil {
			f.Close()
			return nil, err
		}
		f.Sync()
	}
	sl.size = off
	d.sessions[session] = sl
	return sl, nil
}

// scanLog calls fn for every whole, intact record of f, in order, and
// stops at the first torn or corrupt one.
func scanLog(f *os.File, fn func(s cell.Segment, at, n int64)) error {
	var off int64
	var h [8]byte
	for {
		if _, err := f.ReadAt(h[:], off); err != nil {
			return nil
		}
		n := int64(binary.BigEndian.Uint32(h[0:]))
		if n > maxFrameData+64 {
			return nil
		}
		rec := make([]byte, n)
		if _, err := f.ReadAt(rec, off+8); err != nil || crc32.Checksum(rec, crcTable) != binary.BigEndian.Uint32(h[4:]) {
			return nil
		}
		var seg cell.Segment
		got := false
		if err := readFrames(io.MultiReader(bytes.NewReader(rec), bytes.NewReader([]byte{0, 0})), func(s cell.Segment) error {
			seg, got = s, true
			return nil
		}); err != nil || !got {
			return nil
		}
		fn(seg, off, 8+n)
		off += 8 + n
	}
}

// DefaultGapWait is how long Disk.Append holds a segment that would leave
// a gap in its cell's range, waiting for the predecessor (pipelined
// appends may arrive out of order), before it refuses it.
const DefaultGapWait = time.Second

// Append retains segs for owner session (addressed to disk to), fsynced,
// and returns once they are. Idempotent per segment: one already retained
// is a no-op (a resend, or a hedged request's twin). A segment that would
// leave a gap after what the session retains of its cell (or the bucket
// held, After) waits up to GapWait for its predecessor, then is refused.
func (d *Disk) Append(session, to string, segs []cell.Segment) error {
	if !validSession(session) {
		return fmt.Errorf("%w: bad session %q", ErrRefused, session)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if to != d.id {
		return fmt.Errorf("%w: %s", ErrRefused, core.AppendRefusal(d.id, to, false))
	}
	sl, err := d.session(session, true)
	if err != nil {
		return fmt.Errorf("retain segment: %w", err)
	}
	var deadline time.Time
	for {
		if why := core.AppendRefusal(d.id, to, sl.sealed); why != "" {
			return fmt.Errorf("%w: %s", ErrRefused, why)
		}
		if sl.failed != nil {
			return fmt.Errorf("%w: this disk failed an fsync of the session's log: %v", ErrRefused, sl.failed)
		}
		gap := gapIn(sl, segs)
		if gap == "" {
			break
		}
		gw := d.GapWait
		if gw <= 0 {
			gw = DefaultGapWait
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(gw)
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return fmt.Errorf("%w: %s (its predecessor did not arrive within %v)", ErrRefused, gap, gw)
		}
		if sl.grown == nil {
			sl.grown = make(chan struct{})
		}
		grown := sl.grown
		d.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-grown:
		case <-t.C:
		}
		t.Stop()
		d.mu.Lock()
	}
	var buf bytes.Buffer
	var refs []recordRef
	hi := map[tailKey]uint64{}
	for _, s := range segs {
		k := tailKey{s.Cell, s.Epoch}
		reach, ok := hi[k]
		if !ok {
			reach = sl.hi[k]
		}
		reach = max(reach, s.After)
		if s.Max <= sl.hi[k] {
			continue // retained already
		}
		hi[k] = max(reach, s.Max)
		var rec bytes.Buffer
		writeFrame(&rec, s)
		var h [8]byte
		binary.BigEndian.PutUint32(h[0:], uint32(rec.Len()))
		binary.BigEndian.PutUint32(h[4:], crc32.Checksum(rec.Bytes(), crcTable))
		refs = append(refs, recordRef{key: k, min: s.Min, max: s.Max, off: sl.size + int64(buf.Len()), n: int64(8 + rec.Len())})
		buf.Write(h[:])
		buf.Write(rec.Bytes())
	}
	if buf.Len() == 0 {
		// Retained already, perhaps by an append still waiting for its
		// fsync: wait for the file as it stands.
		gen, end := sl.gen, sl.size
		d.mu.Unlock()
		err := d.syncTo(sl, gen, end)
		d.mu.Lock()
		return err
	}
	if _, err := sl.f.WriteAt(buf.Bytes(), sl.size); err != nil {
		return fmt.Errorf("retain segment: %w", err)
	}
	sl.size += int64(buf.Len())
	for _, r := range refs {
		sl.addRef(r)
	}
	for k, v := range hi {
		sl.hi[k] = max(sl.hi[k], v)
	}
	if sl.grown != nil {
		close(sl.grown) // appends waiting for a predecessor look again
		sl.grown = nil
	}
	gen, end := sl.gen, sl.size
	d.mu.Unlock()
	err = d.syncTo(sl, gen, end)
	d.mu.Lock()
	return err
}

// gapIn says which segment of segs would leave a gap in its cell's range
// ("" none), counting the earlier segments of segs. Call with d.mu held.
func gapIn(sl *sessionLog, segs []cell.Segment) string {
	hi := map[tailKey]uint64{}
	for _, s := range segs {
		k := tailKey{s.Cell, s.Epoch}
		reach, ok := hi[k]
		if !ok {
			reach = sl.hi[k]
		}
		if !core.AppendFits(reach, s.After, s.Min, core.MutNone) {
			reach = max(reach, s.After)
			return fmt.Sprintf("%s epoch %d: segment %d-%d leaves a gap after %d", s.Cell, s.Epoch, s.Min, s.Max, reach)
		}
		hi[k] = max(reach, s.After, s.Max)
	}
	return ""
}

// syncTo returns once sl's file is durable through end (of generation
// gen): by an fsync that began after that write, its own or another
// append's.
func (d *Disk) syncTo(sl *sessionLog, gen uint64, end int64) error {
	sl.smu.Lock()
	defer sl.smu.Unlock()
	if sl.syncedGen > gen || sl.syncedGen == gen && sl.synced >= end {
		return nil // an fsync since covered it (or the file was emptied: trimmed)
	}
	d.mu.Lock()
	f, failed, curGen, curEnd := sl.f, sl.failed, sl.gen, sl.size
	d.mu.Unlock()
	if failed != nil {
		return fmt.Errorf("retain segment: fsync: %w", failed)
	}
	if err := f.Sync(); err != nil {
		d.mu.Lock()
		sl.failed = err
		d.mu.Unlock()
		return fmt.Errorf("retain segment: fsync: %w", err)
	}
	sl.syncedGen, sl.synced = curGen, curEnd
	return nil
}

// Trim drops a session's segments of cell at epoch through txid (the
// bucket has them); once nothing is left the log is emptied, and once
// most of a large log is trimmed its live records are rewritten into a
// new one (compact), so a session written without pause does not grow
// its log without bound.
func (d *Disk) Trim(session, cellName string, epoch, txid uint64) {
	if !validSession(session) {
		return
	}
	d.mu.Lock()
	sl, err := d.session(session, false)
	if err != nil || sl.f == nil || sl.sealed {
		d.mu.Unlock()
		return
	}
	k := tailKey{cellName, epoch}
	if txid <= sl.trimmed[k] {
		d.mu.Unlock()
		return
	}
	sl.trimmed[k] = txid
	sl.trimKey(k, txid)
	if sl.live == 0 && sl.f.Truncate(0) == nil {
		sl.f.Sync()
		sl.size = 0
		sl.resetIndex()
		sl.gen++
	}
	due := d.compactDue(sl)
	d.mu.Unlock()
	if due {
		d.compact(session, sl)
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
	sl, err := d.session(session, false)
	if err == nil && !sl.sealed {
		if err = os.MkdirAll(d.sessionDir(session), 0o755); err == nil {
			err = writeSynced(filepath.Join(d.sessionDir(session), "sealed"), nil)
		}
		if err == nil {
			sl.sealed = true
			if sl.grown != nil {
				close(sl.grown)
				sl.grown = nil
			}
		}
	}
	if err != nil {
		d.mu.Unlock()
		return fmt.Errorf("seal session: %w", err)
	}
	// Appends are refused from here on: read outside the lock.
	refs, f := slices.Clone(sl.index), sl.f
	trimmed := maps.Clone(sl.trimmed)
	d.mu.Unlock()
	for _, r := range refs {
		if r.max <= trimmed[r.key] {
			continue // in the bucket
		}
		rec := make([]byte, r.n-8)
		if _, err := f.ReadAt(rec, r.off+8); err != nil {
			return fmt.Errorf("read retained segment: %w", err)
		}
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	return writeEnd(w)
}

// Forget removes everything retained for a session whose record was
// sealed (by its successor's recovery, or by the session itself after a
// clean drain): its tails are in the bucket. The session is sealed here
// too, so no late append is retained for it.
func (d *Disk) Forget(session string) {
	if !validSession(session) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	sl, err := d.session(session, false)
	if err != nil {
		return
	}
	if !sl.sealed {
		if os.MkdirAll(d.sessionDir(session), 0o755) != nil || writeSynced(filepath.Join(d.sessionDir(session), "sealed"), nil) != nil {
			return
		}
		sl.sealed = true
		if sl.grown != nil {
			close(sl.grown)
			sl.grown = nil
		}
	}
	if sl.f == nil {
		return
	}
	sl.f.Truncate(0)
	sl.f.Sync()
	sl.size = 0
	sl.resetIndex()
	sl.gen++
}

// Retained is the bytes and sessions this disk retains for others.
func (d *Disk) Retained() (bytes int64, sessions int) {
	ents, _ := os.ReadDir(filepath.Join(d.dir, "s"))
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(d.dir, "s", e.Name(), "log")); err == nil && fi.Size() > 0 {
			bytes += fi.Size()
			sessions++
		}
	}
	return bytes, sessions
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
