package cell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/superfly/ltx"
)

// This file is the one place that writes and reads LTX files, and names
// them in the bucket (docs/bucket-layout.md).

// LTXPrefix is the prefix of every LTX object of cell.
func LTXPrefix(cell string) string { return "cells/" + cell + "/ltx/" }

// LTXKey names the LTX object holding TXIDs minTXID..maxTXID of cell,
// written in epoch.
func LTXKey(cell string, epoch, minTXID, maxTXID uint64) string {
	return fmt.Sprintf("%se%016x/%s", LTXPrefix(cell), epoch, ltx.FormatFilename(ltx.TXID(minTXID), ltx.TXID(maxTXID)))
}

// encodeBatch writes b as one LTX file. Pages come from the WAL frames b
// names, and, for a full batch, from the database file for every other
// page (for a merge, for the pages it names, each checked against the
// checksum it had when the merge began). Each page read from the WAL is
// checked against the checksum taken at capture, and a full batch against
// the database checksum, so a WAL or file that changed under the
// replicator is an error, not a bad upload.
func encodeBatch(b *batch, pageSize uint32, wal *walFollower, dbf cellFile) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeBatchTo(&buf, b, pageSize, wal, dbf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeBatchTo is encodeBatch writing to w.
func encodeBatchTo(w io.Writer, b *batch, pageSize uint32, wal *walFollower, dbf cellFile) error {
	pe, err := getEncoder(w)
	if err != nil {
		return err
	}
	defer putEncoder(pe)
	enc := &pe.enc
	hdr := ltx.Header{
		Version:   ltx.Version,
		PageSize:  pageSize,
		Commit:    b.commit,
		MinTXID:   ltx.TXID(b.min),
		MaxTXID:   ltx.TXID(b.max),
		Timestamp: time.Now().UnixMilli(),
	}
	if !b.full {
		hdr.PreApplyChecksum = b.pre
	}
	if err := enc.EncodeHeader(hdr); err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	page := make([]byte, pageSize)
	h := ltx.NewHasher()
	var acc ltx.Checksum
	put := func(pgno uint32) error {
		ref, inWAL := b.pages[pgno]
		if inWAL {
			if err := wal.readPage(ref.off, page); err != nil {
				return err
			}
		} else if _, err := dbf.ReadAt(page, int64(pgno-1)*int64(pageSize)); err != nil {
			return fmt.Errorf("read page %d of the database file: %w", pgno, err)
		}
		sum := ltx.ChecksumPageWithHasher(h, pgno, page)
		if inWAL && sum != ref.sum {
			return fmt.Errorf("page %d in the wal at %d changed after it was captured", pgno, ref.off)
		}
		if want, ok := b.file[pgno]; ok && sum != want {
			return fmt.Errorf("page %d of the database file changed after the merge began", pgno)
		}
		acc ^= sum
		return enc.EncodePage(ltx.PageHeader{Pgno: pgno}, page)
	}
	if b.full {
		lock := ltx.LockPgno(pageSize)
		for pgno := uint32(1); pgno <= b.commit; pgno++ {
			if pgno == lock {
				continue
			}
			if err := put(pgno); err != nil {
				return err
			}
		}
		if got := ltx.ChecksumFlag | acc; got != b.post {
			return fmt.Errorf("snapshot pages have checksum %s, captured state %s", got, b.post)
		}
	} else {
		pgnos := make([]uint32, 0, len(b.pages)+len(b.file))
		for pgno := range b.pages {
			if pgno <= b.commit { // pages past the end were truncated away
				pgnos = append(pgnos, pgno)
			}
		}
		for pgno := range b.file {
			if _, dup := b.pages[pgno]; !dup && pgno <= b.commit {
				pgnos = append(pgnos, pgno)
			}
		}
		slices.Sort(pgnos)
		for _, pgno := range pgnos {
			if err := put(pgno); err != nil {
				return err
			}
		}
	}
	enc.SetPostApplyChecksum(b.post)
	if err := enc.Close(); err != nil {
		return fmt.Errorf("finish ltx: %w", err)
	}
	return nil
}

// pooledEncoder is an LTX encoder that can be used again. ltx.Encoder has
// no Reset, and a new one is ~140 KB (its LZ4 compressor's hash table):
// allocating that for every segment was most of the time it took to encode
// a one-page commit, and most of the replicator's garbage. A pooled one is
// reset by copying over it the value of an encoder as NewEncoder made it:
// an Encoder is a plain value (no locks, nothing pointing into itself), and
// TestEncoderReuse pins that a reused encoder writes exactly what a new one
// does.
type pooledEncoder struct {
	enc   ltx.Encoder
	fresh ltx.Encoder // as NewEncoder returned it, writing to out
	out   *switchWriter
}

// switchWriter writes to whichever writer the encoder's current file goes
// to.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

var encoders sync.Pool

// getEncoder returns an encoder ready for a new file written to w.
func getEncoder(w io.Writer) (*pooledEncoder, error) {
	pe, _ := encoders.Get().(*pooledEncoder)
	if pe == nil {
		out := &switchWriter{}
		fresh, err := ltx.NewEncoder(out)
		if err != nil {
			return nil, err
		}
		pe = &pooledEncoder{fresh: *fresh, out: out}
	}
	pe.enc = pe.fresh
	pe.out.w = w
	return pe, nil
}

func putEncoder(pe *pooledEncoder) {
	pe.out.w = nil
	encoders.Put(pe)
}

// applyRunBytes bounds the pages applyLTX writes with one call.
const applyRunBytes = 1 << 20

// errBadLTX marks an LTX object that cannot be applied: corrupt, or not
// the one its name promises, or not following the one before it.
var errBadLTX = errors.New("bad ltx object")

// applyLTX applies one LTX file (seg names it) to the database file f whose
// state is st: it checks the file's own checksum, that its TXIDs are the
// ones in its name, that it starts from st's checksum (or is a snapshot),
// and that st then has the post-apply checksum the file promises.
func applyLTX(seg segment, src io.Reader, f *os.File, st *dbState) error {
	dec := ltx.NewDecoder(newBoundedLTX(src, MaxCellBytes))
	dec.SetRetainPageIndex(false)
	if err := dec.DecodeHeader(); err != nil {
		return fmt.Errorf("%w: decode header: %w", errBadLTX, err)
	}
	h := dec.Header()
	if uint64(h.MinTXID) != seg.min || uint64(h.MaxTXID) != seg.max {
		return fmt.Errorf("%w: header holds TXIDs %d-%d", errBadLTX, h.MinTXID, h.MaxTXID)
	}
	if st.pageSize == 0 {
		*st = newDBState(h.PageSize)
	} else if h.PageSize != st.pageSize {
		return fmt.Errorf("%w: page size %d, database %d", errBadLTX, h.PageSize, st.pageSize)
	}
	if h.IsSnapshot() {
		st.resize(0)
	} else if h.PreApplyChecksum != st.checksum() {
		return fmt.Errorf("%w: pre-apply checksum %s, but the database at TXID %d has %s",
			errBadLTX, h.PreApplyChecksum, seg.min-1, st.checksum())
	}
	oldPages := st.pages()
	ps := int64(h.PageSize)
	// Runs of consecutive pages (a snapshot is one) are written with one
	// call each: a write per page made a 1 MB restore hundreds of system
	// calls.
	page := make([]byte, ps)
	run := make([]byte, 0, max(ps, min(applyRunBytes, int64(h.Commit)*ps)))
	var runStart uint32 // first page of run
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		if _, err := f.WriteAt(run, int64(runStart-1)*ps); err != nil {
			return fmt.Errorf("write pages %d-%d: %w", runStart, runStart+uint32(int64(len(run))/ps)-1, err)
		}
		run = run[:0]
		return nil
	}
	hash := ltx.NewHasher()
	want := uint32(1) // snapshots: the next page number expected
	for {
		var ph ltx.PageHeader
		if err := dec.DecodePage(&ph, page); err == io.EOF {
			break
		} else if err != nil {
			return fmt.Errorf("%w: decode page: %w", errBadLTX, err)
		}
		if ph.Pgno > h.Commit {
			return fmt.Errorf("%w: page %d past the database size %d", errBadLTX, ph.Pgno, h.Commit)
		}
		if h.IsSnapshot() {
			if want == st.lockPgno {
				want++
			}
			if ph.Pgno != want {
				return fmt.Errorf("%w: snapshot has page %d where %d belongs", errBadLTX, ph.Pgno, want)
			}
			want++
		}
		st.set(ph.Pgno, ltx.ChecksumPageWithHasher(hash, ph.Pgno, page))
		if len(run) > 0 && (ph.Pgno != runStart+uint32(int64(len(run))/ps) || int64(len(run))+ps > int64(cap(run))) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(run) == 0 {
			runStart = ph.Pgno
		}
		run = append(run, page...)
	}
	if err := flush(); err != nil {
		return err
	}
	if err := dec.Close(); err != nil {
		return fmt.Errorf("%w: %w", errBadLTX, err)
	}
	if want == st.lockPgno {
		want++
	}
	if h.IsSnapshot() && want != h.Commit+1 {
		return fmt.Errorf("%w: snapshot ends at page %d of %d", errBadLTX, want-1, h.Commit)
	}
	// A database that grows gets every new page written: a page past the
	// old end that this file does not hold would be zeros nobody wrote (a
	// header claiming more pages than it carries, or a sparse file).
	for pgno := oldPages + 1; pgno <= h.Commit && !h.IsSnapshot(); pgno++ {
		if pgno != st.lockPgno && (pgno > st.pages() || st.sums[pgno-1] == 0) {
			return fmt.Errorf("%w: the database grows to %d pages but page %d is in no LTX file", errBadLTX, h.Commit, pgno)
		}
	}
	if err := f.Truncate(int64(h.Commit) * ps); err != nil {
		return fmt.Errorf("truncate: %w", err)
	}
	st.resize(h.Commit)
	if post := dec.Trailer().PostApplyChecksum; st.checksum() != post {
		return fmt.Errorf("%w: post-apply checksum %s, but the database has %s", errBadLTX, post, st.checksum())
	}
	return nil
}
