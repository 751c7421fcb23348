package cell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
)

// The upload side of replication: the uploader goroutine that ships
// batches in TXID order, snapshots written beside it, and the bookkeeping
// of what is durable.

// StreamBytes is the size (in pages captured) past which an LTX file is
// encoded to a temporary file beside the database and streamed to the
// bucket, so that a snapshot of a large database is never in memory
// whole. Smaller ones are encoded in memory and sent with one Put.
const StreamBytes = 8 << 20

// uploadTemp names the temporary files of StreamBytes uploads (beside the
// database; NewReplicator removes any a crash left).
const uploadTemp = ".upload-"

// swept holds the directories whose stale upload files this process
// removed already.
var swept sync.Map

// removeStaleUploads removes the temporary files of StreamBytes uploads a
// process that died mid-upload left in dir, once per directory and
// process: this process removes its own when done with them, and a
// directory of 10,000 cells is not worth listing at every activation.
func removeStaleUploads(dir string) {
	if _, done := swept.LoadOrStore(dir, true); done {
		return
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "*"+uploadTemp+"*"))
	for _, p := range stale {
		os.Remove(p)
	}
}

// encode encodes b and returns how to upload it, its size, and what to do
// once done with it. An error is one of encoding (the local state is not
// what was captured); a temporary file that cannot be written means
// encoding in memory instead.
func (r *Replicator) encode(b *batch) (put func(key string) error, size int64, cleanup func(), err error) {
	pages := int64(len(b.pages) + len(b.file))
	if b.full {
		pages = int64(b.commit)
	}
	if pages*int64(r.state.pageSize) > StreamBytes {
		f, size, err := r.encodeToFile(b)
		var tempErr *tempFileError
		switch {
		case err == nil:
			put := func(key string) error {
				_, err := bucket.PutStream(r.ctx, r.cfg.Store, key, f, size, bucket.Cond{})
				return err
			}
			return put, size, func() { f.Close(); os.Remove(f.Name()) }, nil
		case !errors.As(err, &tempErr):
			return nil, 0, nil, err
		}
		r.log.Warn("stream ltx: temporary file failed; encoding in memory", "err", err)
	}
	data, err := encodeBatch(b, r.state.pageSize, r.wal, r.dbf)
	if err != nil {
		return nil, 0, nil, err
	}
	put = func(key string) error {
		_, err := r.cfg.Store.Put(r.ctx, key, data, bucket.Cond{})
		return err
	}
	return put, int64(len(data)), func() {}, nil
}

// tempFileError is a failure of the temporary file itself (a full disk,
// say), not of encoding.
type tempFileError struct{ err error }

func (e *tempFileError) Error() string { return "temporary file: " + e.err.Error() }
func (e *tempFileError) Unwrap() error { return e.err }

// encodeToFile encodes b into a temporary file beside the database and
// returns it with its size; on error it leaves no file.
func (r *Replicator) encodeToFile(b *batch) (*os.File, int64, error) {
	f, err := os.CreateTemp(filepath.Dir(r.db.path), filepath.Base(r.db.path)+uploadTemp+"*")
	if err != nil {
		return nil, 0, &tempFileError{err}
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	fw := &writeErr{w: f}
	bw := bufio.NewWriterSize(fw, 1<<20)
	if err := encodeBatchTo(bw, b, r.state.pageSize, r.wal, r.dbf); err != nil {
		if fw.err != nil {
			return fail(&tempFileError{fw.err})
		}
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(&tempFileError{err})
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(&tempFileError{err})
	}
	return f, fi.Size(), nil
}

// writeErr remembers the first error of w: an encoding that failed because
// its temporary file could not be written is not an encoding error.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil && w.err == nil {
		w.err = err
	}
	return n, err
}

// startSnapshot begins writing a snapshot at the last captured TXID and
// returns it, or nil when one is in flight, nothing was captured since the
// newest one, or replication failed.
func (r *Replicator) startSnapshot() *batch {
	x := r.captured.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snap != nil || r.err != nil || x <= r.lastSnap {
		return nil
	}
	r.segs, r.segBytes, r.lastSnap = 0, 0, x
	r.afterSnapshot(x, r.state.checksum())
	// Later commits start a new segment, so one begins right after the
	// snapshot and a restore can go from one to the other.
	r.open = nil
	s := &batch{
		min: 1, max: x, full: true,
		commit: r.state.pages(), post: r.state.checksum(),
		pages: maps.Clone(r.walIndex),
		done:  make(chan struct{}),
	}
	r.snap = s
	r.wg.Add(1)
	go r.runSnapshot(s)
	return s
}

// runSnapshot uploads a snapshot or a merge beside the uploader.
func (r *Replicator) runSnapshot(s *batch) {
	defer r.wg.Done()
	err := r.ship(s)
	r.mu.Lock()
	s.err = err
	if s.merge {
		r.merging--
		if err == nil {
			r.stats.Merges++
		}
	} else {
		r.snap = nil
		if err == nil {
			r.stats.Snapshots++
		}
	}
	if err == nil {
		r.chainUploaded(r.segmentOf(s))
		r.advance(s.max)
	}
	r.mu.Unlock()
	close(s.done)
}

// run is the uploader: one batch at a time, oldest first.
func (r *Replicator) run() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		var b *batch
		if len(r.pending) > 0 && r.err == nil {
			b = r.pending[0]
			r.pending = r.pending[1:]
			if b == r.open {
				r.open = nil // commits from now on form the next batch
			}
			if b.full {
				r.lastSnap = max(r.lastSnap, b.max)
			}
			r.uploading = true
		}
		r.mu.Unlock()
		if b == nil {
			select {
			case <-r.kick:
				continue
			case <-r.ctx.Done():
				return
			}
		}
		err := r.ship(b)
		r.mu.Lock()
		r.uploading = false
		if err == nil {
			if b.inline {
				r.stats.Snapshots++
			} else {
				r.stats.Segments++
			}
			r.chainUploaded(r.segmentOf(b))
			r.advance(b.max)
		}
		r.mu.Unlock()
		if err != nil {
			return // closing, or failed for good
		}
	}
}

// segmentOf names the object of batch b.
func (r *Replicator) segmentOf(b *batch) segment {
	return segment{key: LTXKey(r.cfg.Cell, r.cfg.Epoch, b.min, b.max), epoch: r.cfg.Epoch, min: b.min, max: b.max}
}

// advance records txid as durable. Call with r.mu held.
func (r *Replicator) advance(txid uint64) {
	if txid > r.durable {
		r.durable = txid
		r.notify()
	}
}

// notify wakes every WaitDurable. Call with r.mu held.
func (r *Replicator) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *Replicator) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
		r.log.Error("replication stopped", "err", err)
		r.notify()
	}
}

// ship encodes b and uploads it. An encoding error is fatal (the local
// state is not what was captured); an upload is retried until it succeeds
// or the replicator closes.
func (r *Replicator) ship(b *batch) error {
	r.filesMu.RLock()
	put, size, cleanup, err := r.encode(b)
	r.filesMu.RUnlock()
	if err != nil {
		err = fmt.Errorf("encode ltx %d-%d: %w", b.min, b.max, err)
		r.fail(err)
		return err
	}
	defer cleanup()
	key := LTXKey(r.cfg.Cell, r.cfg.Epoch, b.min, b.max)
	backoff := 50 * time.Millisecond
	for {
		err := put(key)
		if err == nil {
			r.mu.Lock()
			r.stats.Bytes += size
			r.mu.Unlock()
			r.log.Debug("ltx uploaded", "key", key, "bytes", size)
			return nil
		}
		if errors.Is(err, bucket.ErrInvalidKey) {
			err = fmt.Errorf("upload %s: %w", key, err)
			r.fail(err)
			return err
		}
		if r.ctx.Err() != nil {
			return fmt.Errorf("upload %s: %w", key, err)
		}
		// The key and bytes are fixed, so trying again is idempotent even
		// when the last outcome was ambiguous.
		r.log.Warn("upload ltx", "key", key, "err", err, "retry_in", backoff)
		r.mu.Lock()
		r.stats.Retries++
		r.mu.Unlock()
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return fmt.Errorf("upload %s: %w", key, err)
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
