package cell

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"

	"github.com/superfly/ltx"
)

// The SQLite WAL file format (https://www.sqlite.org/fileformat2.html#walformat).
const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagicLE         = 0x377f0682 // checksums over little-endian words
	walMagicBE         = 0x377f0683 // checksums over big-endian words
	walVersion         = 3007000
)

// walHeader is the 32-byte header of a WAL file. Salts change every time
// SQLite restarts the WAL (after a complete checkpoint); a frame belongs to
// the current WAL only if it carries the header's salts.
type walHeader struct {
	bigEndian    bool
	pageSize     uint32
	salt1, salt2 uint32
	sum0, sum1   uint32 // checksum of the first 24 bytes: the seed of frame 1
}

func parseWALHeader(b []byte) (walHeader, error) {
	var h walHeader
	switch binary.BigEndian.Uint32(b[0:]) {
	case walMagicLE:
	case walMagicBE:
		h.bigEndian = true
	default:
		return h, fmt.Errorf("bad magic %#08x", binary.BigEndian.Uint32(b[0:]))
	}
	if v := binary.BigEndian.Uint32(b[4:]); v != walVersion {
		return h, fmt.Errorf("unknown version %d", v)
	}
	h.pageSize = binary.BigEndian.Uint32(b[8:])
	h.salt1 = binary.BigEndian.Uint32(b[16:])
	h.salt2 = binary.BigEndian.Uint32(b[20:])
	h.sum0, h.sum1 = walChecksum(h.bigEndian, 0, 0, b[:24])
	if h.sum0 != binary.BigEndian.Uint32(b[24:]) || h.sum1 != binary.BigEndian.Uint32(b[28:]) {
		return h, errors.New("header checksum mismatch")
	}
	return h, nil
}

// walChecksum continues SQLite's WAL checksum (two 32-bit Fibonacci-weighted
// sums) over b, whose length is a multiple of 8.
func walChecksum(bigEndian bool, s0, s1 uint32, b []byte) (uint32, uint32) {
	if bigEndian {
		for i := 0; i+8 <= len(b); i += 8 {
			s0 += binary.BigEndian.Uint32(b[i:]) + s1
			s1 += binary.BigEndian.Uint32(b[i+4:]) + s0
		}
		return s0, s1
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += binary.LittleEndian.Uint32(b[i:]) + s1
		s1 += binary.LittleEndian.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// walFrame is one captured frame: where its page image sits in the WAL and
// the LTX checksum of that image.
type walFrame struct {
	pgno uint32
	ref  pageRef
}

// pageRef locates a page image in the WAL file.
type pageRef struct {
	off int64        // offset of the frame (its header); the page follows
	sum ltx.Checksum // ltx.ChecksumPage of the image
}

// walFollower reads a WAL file forward, one committed transaction at a
// time, remembering how far it got. Frames are validated the way SQLite's
// recovery does (salts and the running checksum); a frame that fails is not
// a torn tail here but corruption, because SQLite just reported it
// committed.
type walFollower struct {
	path     string
	pageSize uint32
	f        cellFile // SQLite's WAL (files.go); set by the replicator
	hdr      walHeader
	known    bool   // hdr describes the WAL that off points into
	off      int64  // offset just past the last consumed commit frame
	s0, s1   uint32 // running checksum at off
	// restartOK is set after a complete checkpoint: SQLite may now restart
	// the WAL with new salts, and everything before it is in the database
	// file. A restart without it means frames were lost, and is an error.
	restartOK bool

	hash hash.Hash64
	txn  []walFrame
}

// walReadBuffer is the size of the buffered reader read uses.
const walReadBuffer = 64 << 10

// walReaders and walFrameBufs hold the read buffers of walFollower.read,
// shared by every cell of the process: a follower needs them only while
// it reads a commit, and a thousand resident cells each keeping its own
// 64 KB reader would hold 64 MB for nothing.
var (
	walReaders   = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, walReadBuffer) }}
	walFrameBufs sync.Pool // *[]byte, one frame (header and page)
)

func getFrameBuffer(size int) *[]byte {
	if p, ok := walFrameBufs.Get().(*[]byte); ok && cap(*p) >= size {
		*p = (*p)[:size]
		return p
	}
	b := make([]byte, size)
	return &b
}

func newWALFollower(path string, pageSize uint32, f cellFile) *walFollower {
	return &walFollower{
		path:      path,
		f:         f,
		pageSize:  pageSize,
		restartOK: true,
		hash:      ltx.NewHasher(),
	}
}

func (w *walFollower) frameSize() int64 { return walFrameHeaderSize + int64(w.pageSize) }

func (w *walFollower) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// readPage copies the page image of the frame at off into buf.
func (w *walFollower) readPage(off int64, buf []byte) error {
	if _, err := w.f.ReadAt(buf, off+walFrameHeaderSize); err != nil {
		return fmt.Errorf("read wal frame at %d: %w", off, err)
	}
	return nil
}

// read consumes the transactions committed since the last call, up to
// mxFrame frames, calling onTxn once per commit with that transaction's
// frames in WAL order and the database size in pages after it. The frames
// slice is reused. A new WAL header (new salts) is accepted only while
// restartOK is set.
func (w *walFollower) read(mxFrame int64, onTxn func(frames []walFrame, commit uint32)) (err error) {
	if w.f == nil {
		return fmt.Errorf("read wal %s: not open", w.path)
	}
	var hb [walHeaderSize]byte
	if _, err := w.f.ReadAt(hb[:], 0); err != nil {
		return fmt.Errorf("read wal header: %w", err)
	}
	h, err := parseWALHeader(hb[:])
	if err != nil {
		return fmt.Errorf("read wal header: %w", err)
	}
	end := walHeaderSize + mxFrame*w.frameSize()
	if !w.known || h.salt1 != w.hdr.salt1 || h.salt2 != w.hdr.salt2 || end < w.off {
		if w.known && !w.restartOK {
			return fmt.Errorf("wal restarted (salts %08x-%08x → %08x-%08x) without a checkpoint by the replicator: frames may be lost",
				w.hdr.salt1, w.hdr.salt2, h.salt1, h.salt2)
		}
		if h.pageSize != w.pageSize {
			return fmt.Errorf("wal page size %d, database page size %d", h.pageSize, w.pageSize)
		}
		w.hdr, w.known = h, true
		w.off, w.s0, w.s1 = walHeaderSize, h.sum0, h.sum1
	}
	w.restartOK = false

	br := walReaders.Get().(*bufio.Reader)
	br.Reset(io.NewSectionReader(w.f, w.off, end-w.off))
	frame := getFrameBuffer(int(w.frameSize()))
	defer func() {
		br.Reset(nil)
		walReaders.Put(br)
		walFrameBufs.Put(frame)
	}()
	s0, s1 := w.s0, w.s1
	w.txn = w.txn[:0]
	for off := w.off; off+w.frameSize() <= end; off += w.frameSize() {
		b := *frame
		if _, err := io.ReadFull(br, b); err != nil {
			return fmt.Errorf("read wal frame at %d: %w", off, err)
		}
		if binary.BigEndian.Uint32(b[8:]) != h.salt1 || binary.BigEndian.Uint32(b[12:]) != h.salt2 {
			return fmt.Errorf("wal frame at %d: salt mismatch (a committed frame is missing)", off)
		}
		s0, s1 = walChecksum(h.bigEndian, s0, s1, b[:8])
		s0, s1 = walChecksum(h.bigEndian, s0, s1, b[walFrameHeaderSize:])
		if s0 != binary.BigEndian.Uint32(b[16:]) || s1 != binary.BigEndian.Uint32(b[20:]) {
			return fmt.Errorf("wal frame at %d: checksum mismatch", off)
		}
		pgno := binary.BigEndian.Uint32(b[0:])
		sum := ltx.ChecksumPageWithHasher(w.hash, pgno, b[walFrameHeaderSize:])
		w.txn = append(w.txn, walFrame{pgno: pgno, ref: pageRef{off: off, sum: sum}})
		if commit := binary.BigEndian.Uint32(b[4:]); commit != 0 {
			onTxn(w.txn, commit)
			w.txn = w.txn[:0]
			w.off, w.s0, w.s1 = off+w.frameSize(), s0, s1
		}
	}
	// Frames after the last commit frame (none, when called from the WAL
	// hook) belong to a transaction still open; the next call rereads them.
	return nil
}

// dbState tracks the LTX checksum of the database as committed: the XOR of
// the checksums of every page but the lock page, kept page by page so a
// commit updates it in time proportional to the pages it wrote.
type dbState struct {
	pageSize uint32
	lockPgno uint32
	sums     []ltx.Checksum // by pgno-1; zero for the lock page
	acc      ltx.Checksum
}

func newDBState(pageSize uint32) dbState {
	return dbState{pageSize: pageSize, lockPgno: ltx.LockPgno(pageSize)}
}

// checksum is the database checksum as LTX defines it (ltx.ChecksumReader).
func (s *dbState) checksum() ltx.Checksum { return ltx.ChecksumFlag | s.acc }

// pages is the database size in pages.
func (s *dbState) pages() uint32 { return uint32(len(s.sums)) }

func (s *dbState) set(pgno uint32, sum ltx.Checksum) {
	if pgno == s.lockPgno {
		return // SQLite never writes it; LTX leaves it out
	}
	if n := int(pgno); n > len(s.sums) {
		s.sums = append(s.sums, make([]ltx.Checksum, n-len(s.sums))...)
	}
	s.acc ^= s.sums[pgno-1] ^ sum
	s.sums[pgno-1] = sum
}

// resize sets the database size after a commit: pages past it leave the
// checksum.
func (s *dbState) resize(pages uint32) {
	for uint32(len(s.sums)) > pages {
		s.acc ^= s.sums[len(s.sums)-1]
		s.sums = s.sums[:len(s.sums)-1]
	}
	if n := int(pages); n > len(s.sums) {
		s.sums = append(s.sums, make([]ltx.Checksum, n-len(s.sums))...)
	}
}

// load computes the state of a database file holding every committed page
// (the WAL checkpointed and empty).
func (s *dbState) load(f cellFile) error {
	size, err := f.Size()
	if err != nil {
		return err
	}
	ps := int64(s.pageSize)
	if size%ps != 0 {
		return fmt.Errorf("database file is %d bytes, not a multiple of the page size %d", size, ps)
	}
	s.sums, s.acc = s.sums[:0], 0
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 256<<10)
	h := ltx.NewHasher()
	page := make([]byte, ps)
	for pgno := uint32(1); int64(pgno) <= size/ps; pgno++ {
		if _, err := io.ReadFull(br, page); err != nil {
			return fmt.Errorf("read page %d: %w", pgno, err)
		}
		if pgno == s.lockPgno {
			s.sums = append(s.sums, 0)
			continue
		}
		sum := ltx.ChecksumPageWithHasher(h, pgno, page)
		s.sums = append(s.sums, sum)
		s.acc ^= sum
	}
	return nil
}
