package cell

import (
	"context"
	"errors"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/celldgo/celld/bucket"
)

// streamingFile is a File store that counts its streamed calls and can
// break the objects it opens after some bytes.
type streamingFile struct {
	*bucket.File
	putFrom, opens atomic.Int64
	breakAfter     int64 // > 0: Open's readers fail after this many bytes
}

func (s *streamingFile) PutFrom(ctx context.Context, key string, r io.ReaderAt, size int64, cond bucket.Cond) (bucket.Object, error) {
	s.putFrom.Add(1)
	return s.File.PutFrom(ctx, key, r, size, cond)
}

func (s *streamingFile) Open(ctx context.Context, key string) (io.ReadCloser, bucket.Object, error) {
	s.opens.Add(1)
	rc, o, err := s.File.Open(ctx, key)
	if err == nil && s.breakAfter > 0 {
		rc = &breaking{ReadCloser: rc, left: s.breakAfter}
	}
	return rc, o, err
}

type breaking struct {
	io.ReadCloser
	left int64
}

var errConnReset = errors.New("connection reset by peer")

func (b *breaking) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errConnReset
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// A database larger than StreamBytes is snapshotted through a temporary
// file and streamed to the store, restored by streaming, and leaves no
// temporary file behind; a read that breaks mid-object is a read error,
// not a broken history.
func TestStreaming_largeSnapshot(t *testing.T) {
	fs, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &streamingFile{File: fs}
	dir := t.TempDir()
	db, r := replicatedAt(t, filepath.Join(dir, "cell.db"), store, 1, RestoreInfo{})
	rng := mrand.New(mrand.NewPCG(1, 1))
	loadBlobs(t, db, rng, StreamBytes+2<<20)
	ctx := context.Background()
	if err := r.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if store.putFrom.Load() == 0 {
		t.Fatal("no LTX file was streamed to the store")
	}
	want := contents(t, db)
	closeReplicated(t, db, r)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), uploadTemp) {
			t.Errorf("temporary upload file %s left behind", e.Name())
		}
	}
	got, info := restored(t, store)
	sameContents(t, contents(t, got), want)
	if store.opens.Load() < int64(info.Objects) {
		t.Errorf("restore opened %d streams for %d objects", store.opens.Load(), info.Objects)
	}

	store.breakAfter = 1 << 20
	_, err = Restore(ctx, store, testCell, filepath.Join(t.TempDir(), "broken.db"))
	if err == nil || errors.Is(err, ErrBrokenHistory) || !errors.Is(err, errConnReset) {
		t.Fatalf("restore over a connection that breaks: %v; want the read error, not a broken history", err)
	}
}

// A temporary file left by a process that died mid-upload is removed when
// the next replicator starts.
func TestStreaming_staleTemporaryFileRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cell.db")
	stale := path + uploadTemp + "123"
	if err := os.WriteFile(stale, []byte("half an upload"), 0o644); err != nil {
		t.Fatal(err)
	}
	replicatedAt(t, path, bucket.NewMem(), 1, RestoreInfo{})
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale %s: %v; want it removed", stale, err)
	}
}

// The same against MinIO: the S3 store streams the snapshot up (a PUT
// from the temporary file) and down (the decoder reads the GET's body).
func TestStreaming_largeSnapshotMinIO(t *testing.T) {
	store := minioStore(t)
	if _, ok := bucket.Store(store).(bucket.Streamer); !ok {
		t.Fatal("the S3 store does not stream")
	}
	db, r := replicated(t, store, 1, RestoreInfo{})
	rng := mrand.New(mrand.NewPCG(2, 2))
	rows := loadBlobs(t, db, rng, StreamBytes+1<<20)
	if err := r.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	smallWrite(t, db, rng, rows, 1)
	waitDurable(t, r)
	got, info := restored(t, store)
	sameContents(t, contents(t, got), contents(t, db))
	if info.Objects < 2 || r.Stats().Bytes < StreamBytes {
		t.Errorf("restore applied %d objects after %d bytes uploaded; want the streamed snapshot and the segment after it", info.Objects, r.Stats().Bytes)
	}
}
