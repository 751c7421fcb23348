package cell

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/superfly/ltx"

	"github.com/celldgo/celld/bucket"
)

// encodeLTX writes a well-formed LTX file (valid file checksum) holding
// pages, whatever its header claims.
func encodeLTX(t *testing.T, h ltx.Header, pages map[uint32][]byte, post ltx.Checksum) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := ltx.NewEncoder(&buf)
	if err != nil {
		t.Fatal(err)
	}
	h.Version, h.Timestamp = ltx.Version, time.Now().UnixMilli()
	if err := enc.EncodeHeader(h); err != nil {
		t.Fatal(err)
	}
	for pgno := uint32(1); pgno <= 1<<20; pgno++ {
		if data, ok := pages[pgno]; ok {
			if err := enc.EncodePage(ltx.PageHeader{Pgno: pgno}, data); err != nil {
				t.Fatal(err)
			}
			delete(pages, pgno)
		}
		if len(pages) == 0 {
			break
		}
	}
	enc.SetPostApplyChecksum(post)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// oneSnapshot replicates one write and returns the store, the key of the
// snapshot and its trailer (the database checksum after it).
func oneSnapshot(t *testing.T) (*bucket.Mem, string, ltx.Trailer, ltx.Header) {
	t.Helper()
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	mustPut(t, db, "k", "v")
	waitDurable(t, r)
	closeReplicated(t, db, r)
	keys := ltxKeys(t, store)
	data, _, err := store.Get(context.Background(), keys[len(keys)-1])
	if err != nil {
		t.Fatal(err)
	}
	dec := ltx.NewDecoder(bytes.NewReader(data))
	if err := dec.Verify(); err != nil {
		t.Fatal(err)
	}
	return store, keys[len(keys)-1], dec.Trailer(), dec.Header()
}

// restorePoison restores the cell with a hostile object in its history and
// checks that the restore fails naming it, without allocating more than a
// few MiB or leaving a file behind.
func restorePoison(t *testing.T, store bucket.Store, key string) error {
	t.Helper()
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Restore(context.Background(), store, testCell, filepath.Join(dir, "cell.db"))
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, ErrBrokenHistory) || !strings.Contains(err.Error(), key) {
		t.Fatalf("Restore = %v; want ErrBrokenHistory naming %s", err, key)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("restore of a hostile object allocated %d MiB", grew>>20)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("restore left %d files behind", len(entries))
	}
	return err
}

func TestRestore_poisonHugeCommit(t *testing.T) {
	store, _, trailer, h := oneSnapshot(t)
	// A segment whose header claims 2^31 pages (8 TiB at 4 KiB): well
	// formed, checksummed, following the snapshot.
	key := LTXKey(testCell, 1, 2, 2)
	page := bytes.Repeat([]byte{7}, int(h.PageSize))
	data := encodeLTX(t, ltx.Header{PageSize: h.PageSize, Commit: 1 << 31, MinTXID: 2, MaxTXID: 2, PreApplyChecksum: trailer.PostApplyChecksum},
		map[uint32][]byte{2: page}, trailer.PostApplyChecksum)
	if _, err := store.Put(context.Background(), key, data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	err := restorePoison(t, store, key)
	if !strings.Contains(err.Error(), "CELLD_MAX_CELL_MB") {
		t.Errorf("error does not name the limit: %v", err)
	}
}

func TestRestore_poisonSparseGrowth(t *testing.T) {
	store, _, trailer, h := oneSnapshot(t)
	// Within the size limit (400 MiB at 4 KiB pages), but the file holds
	// one page: the rest of the database would be zeros nobody wrote.
	key := LTXKey(testCell, 1, 2, 2)
	page := bytes.Repeat([]byte{7}, int(h.PageSize))
	data := encodeLTX(t, ltx.Header{PageSize: h.PageSize, Commit: 100_000, MinTXID: 2, MaxTXID: 2, PreApplyChecksum: trailer.PostApplyChecksum},
		map[uint32][]byte{3: page}, trailer.PostApplyChecksum)
	if _, err := store.Put(context.Background(), key, data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	err := restorePoison(t, store, key)
	if !strings.Contains(err.Error(), "in no LTX file") {
		t.Errorf("error = %v", err)
	}
}

func TestRestore_poisonPageLength(t *testing.T) {
	store, key, _, _ := oneSnapshot(t)
	data, _, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	// The 4-byte length of the first page's compressed data says 4 GiB.
	binary.BigEndian.PutUint32(data[ltx.HeaderSize+ltx.PageHeaderSize:], 0xFFFFFFF0)
	if _, err := store.Put(context.Background(), key, data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	err = restorePoison(t, store, key)
	if !strings.Contains(err.Error(), "compressed size") {
		t.Errorf("error = %v", err)
	}
}

func TestRestore_cellSizeLimit(t *testing.T) {
	store, key, _, _ := oneSnapshot(t)
	old := MaxCellBytes
	t.Cleanup(func() { MaxCellBytes = old })
	MaxCellBytes = 4096 // smaller than the one-write database
	err := restorePoison(t, store, key)
	if !strings.Contains(err.Error(), "limit") {
		t.Errorf("error = %v", err)
	}
	MaxCellBytes = old
	if _, err := Restore(context.Background(), store, testCell, filepath.Join(t.TempDir(), "cell.db")); err != nil {
		t.Fatalf("restore within the limit: %v", err)
	}
}
