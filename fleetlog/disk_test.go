package fleetlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
)

func seg(c string, e, mn, mx, after uint64) cell.Segment {
	return cell.Segment{Cell: c, Epoch: e, Min: mn, Max: mx, After: after, Data: bytes.Repeat([]byte{byte(mx)}, 100)}
}

func sealed(t *testing.T, d *Disk, session string) []cell.Segment {
	t.Helper()
	var buf bytes.Buffer
	if err := d.Seal(session, d.ID(), &buf); err != nil {
		t.Fatalf("seal: %v", err)
	}
	var out []cell.Segment
	if err := readFrames(&buf, func(s cell.Segment) error { out = append(out, s); return nil }); err != nil {
		t.Fatalf("read sealed range: %v", err)
	}
	return out
}

// TestDisk_retainSealRestart: segments are retained across a restart, a
// gap, a wrong disk and a sealed session are refused, a torn tail is cut,
// and a seal returns exactly what the bucket may lack.
func TestDisk_retainSealRestart(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.GapWait = 50 * time.Millisecond
	const s = "sess1"
	if err := d.Append(s, d.ID(), []cell.Segment{seg("A:1", 1, 1, 2, 0), seg("A:1", 1, 3, 3, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := d.Append(s, d.ID(), []cell.Segment{seg("A:1", 1, 5, 5, 0)}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "segment 5-5 leaves a gap after 3") {
		t.Fatalf("a gap after 3: %v, want refused, naming the gap", err)
	}
	if err := d.Append(s, "other-disk", []cell.Segment{seg("A:1", 1, 4, 4, 0)}); !errors.Is(err, ErrRefused) {
		t.Fatalf("another disk: %v, want refused", err)
	}
	// A segment after what the bucket holds (After) is no gap.
	if err := d.Append(s, d.ID(), []cell.Segment{seg("B:1", 2, 10, 11, 9)}); err != nil {
		t.Fatal(err)
	}
	// Idempotent: the same segment again.
	if err := d.Append(s, d.ID(), []cell.Segment{seg("A:1", 1, 3, 3, 0)}); err != nil {
		t.Fatal(err)
	}
	d.Trim(s, "A:1", 1, 2)
	// A restart (a new Disk on the same directory), with a torn record
	// at the end of the log.
	f, err := os.OpenFile(filepath.Join(dir, "s", s, "log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0, 0, 1, 0, 9, 9})
	f.Close()
	d2, err := OpenDisk(dir)
	if err != nil || d2.ID() != d.ID() {
		t.Fatalf("reopen: %v, id %s vs %s", err, d2.ID(), d.ID())
	}
	if err := d2.Append(s, d2.ID(), []cell.Segment{seg("A:1", 1, 4, 4, 0)}); err != nil {
		t.Fatalf("append after restart (range known from disk): %v", err)
	}
	got := sealed(t, d2, s)
	// After a restart the trim is forgotten: 1-2 comes back (harmless).
	want := [][3]uint64{{1, 1, 2}, {1, 3, 3}, {2, 10, 11}, {1, 4, 4}}
	if len(got) != len(want) {
		t.Fatalf("sealed range %d segments, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Epoch != w[0] || got[i].Min != w[1] || got[i].Max != w[2] || len(got[i].Data) != 100 || got[i].Data[0] != byte(w[2]) {
			t.Errorf("segment %d = e%d %d-%d (%d bytes), want e%d %d-%d", i, got[i].Epoch, got[i].Min, got[i].Max, len(got[i].Data), w[0], w[1], w[2])
		}
	}
	if err := d2.Append(s, d2.ID(), []cell.Segment{seg("A:1", 1, 5, 5, 0)}); !errors.Is(err, ErrRefused) {
		t.Fatalf("append to a sealed session: %v, want refused", err)
	}
	d3, _ := OpenDisk(dir)
	if err := d3.Append(s, d3.ID(), []cell.Segment{seg("A:1", 1, 5, 5, 0)}); !errors.Is(err, ErrRefused) {
		t.Fatalf("append to a sealed session after a restart: %v, want refused", err)
	}
	var buf bytes.Buffer
	if err := d3.Seal(s, "lost-disk", &buf); !errors.Is(err, ErrRefused) {
		t.Fatalf("seal for another disk: %v, want refused", err)
	}
}

// TestDisk_outOfOrder: pipelined appends arriving out of order — a
// segment whose predecessor is still on its way waits for it, and both
// are retained in range order; a resend of either is a no-op.
func TestDisk_outOfOrder(t *testing.T) {
	d, err := OpenDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.GapWait = time.Minute // the predecessor comes; the test must not depend on when
	if err := d.Append("s", d.ID(), []cell.Segment{seg("A:1", 1, 1, 1, 0)}); err != nil {
		t.Fatal(err)
	}
	later := make(chan error, 1)
	go func() { later <- d.Append("s", d.ID(), []cell.Segment{seg("A:1", 1, 3, 3, 0), seg("B:1", 1, 1, 1, 0)}) }()
	// Until 2 arrives, 3 is held: wait until its append is blocked on
	// the gap (it has not answered), without assuming when it started.
	select {
	case err := <-later:
		t.Fatalf("the append of 3 answered (%v) before its predecessor 2 arrived", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := d.Append("s", d.ID(), []cell.Segment{seg("A:1", 1, 2, 2, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := <-later; err != nil {
		t.Fatalf("the append of 3 after 2 arrived: %v", err)
	}
	for _, sg := range []cell.Segment{seg("A:1", 1, 2, 2, 0), seg("A:1", 1, 3, 3, 0)} {
		if err := d.Append("s", d.ID(), []cell.Segment{sg}); err != nil {
			t.Fatalf("resend of %d: %v", sg.Min, err)
		}
	}
	got := sealed(t, d, "s")
	var ranges []string
	for _, g := range got {
		ranges = append(ranges, fmt.Sprintf("%s:%d-%d", g.Cell, g.Min, g.Max))
	}
	if want := "A:1:1-1 A:1:2-2 A:1:3-3 B:1:1-1"; strings.Join(ranges, " ") != want {
		t.Fatalf("sealed range %v, want %s (each once, in order)", ranges, want)
	}
}

// TestDisk_trimEmpties: once the bucket has everything, the log is empty.
func TestDisk_trimEmpties(t *testing.T) {
	d, err := OpenDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d.Append("s", d.ID(), []cell.Segment{seg("A:1", 1, 1, 1, 0), seg("A:1", 1, 2, 2, 0)})
	if n, _ := d.Retained(); n == 0 {
		t.Fatal("nothing retained")
	}
	d.Trim("s", "A:1", 1, 2)
	if n, _ := d.Retained(); n != 0 {
		t.Fatalf("retained %d bytes after the bucket got everything", n)
	}
	if got := sealed(t, d, "s"); len(got) != 0 {
		t.Fatalf("sealed range after trims: %+v", got)
	}
}

// TestDisk_concurrentAppends: appends of many cells at once (they share
// fsyncs) are each retained once answered, across a restart.
func TestDisk_concurrentAppends(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	const cells, per = 16, 20
	errs := make(chan error, cells)
	for c := range cells {
		go func() {
			name := "C:" + string(rune('a'+c))
			for i := uint64(1); i <= per; i++ {
				if err := d.Append("sess", d.ID(), []cell.Segment{seg(name, 1, i, i, 0)}); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cells {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d2, err := OpenDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, s := range sealed(t, d2, "sess") {
		if s.Min != got[s.Cell]+1 {
			t.Fatalf("%s: segment %d-%d after %d", s.Cell, s.Min, s.Max, got[s.Cell])
		}
		got[s.Cell] = s.Max
	}
	if len(got) != cells {
		t.Fatalf("retained %d cells, want %d", len(got), cells)
	}
	for c, hi := range got {
		if hi != per {
			t.Fatalf("%s retained through %d, want %d", c, hi, per)
		}
	}
}

// BenchmarkDisk_Append is one follower append (write and fsync) of a
// small segment: a fleet acknowledgement's disk cost. Parallel, the
// appends share fsyncs.
func BenchmarkDisk_Append(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(map[int]string{1: "serial", 16: "16-at-once"}[par], func(b *testing.B) {
			d, err := OpenDisk(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			var next [64]uint64 // GOMAXPROCS×16 goroutines at most 64, one cell each
			b.SetParallelism(par)
			b.ReportAllocs()
			var id atomic.Int32
			b.RunParallel(func(pb *testing.PB) {
				c := int(id.Add(1) - 1)
				name := fmt.Sprintf("C:%d", c)
				for pb.Next() {
					next[c]++
					if err := d.Append("sess", d.ID(), []cell.Segment{seg(name, 1, next[c], next[c], 0)}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestDisk_compacts: a session written and trimmed without pause (there
// is always something live, so the log is never emptied) keeps its log
// bounded: once mostly trimmed it is rewritten with its live records,
// which a seal — and a restart — still return exactly.
func TestDisk_compacts(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.CompactAt = 64 << 10
	const n = 2000 // 100-byte segments: ~250 KiB appended in all
	for i := uint64(1); i <= n; i++ {
		if err := d.Append("s", d.ID(), []cell.Segment{seg("A:1", 1, i, i, 0), seg("B:1", 1, i, i, 0)}); err != nil {
			t.Fatal(err)
		}
		if i > 10 {
			d.Trim("s", "A:1", 1, i-10) // the bucket has all but the last 10
			d.Trim("s", "B:1", 1, i-10)
		}
	}
	if size, _ := d.Retained(); size >= 2*(64<<10) {
		t.Fatalf("the log holds %d bytes for 20 live segments; want it compacted below %d", size, 2*(64<<10))
	}
	d2, err := OpenDisk(dir) // a restart: the compacted log reads back
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Append("s", d2.ID(), []cell.Segment{seg("A:1", 1, n+1, n+1, 0)}); err != nil {
		t.Fatalf("append after a restart on the compacted log: %v", err)
	}
	var want []string
	for i := uint64(n - 9); i <= n; i++ {
		want = append(want, fmt.Sprintf("A:1:%d", i), fmt.Sprintf("B:1:%d", i))
	}
	want = append(want, fmt.Sprintf("A:1:%d", n+1))
	var have []string
	for _, g := range sealed(t, d2, "s") {
		if g.Min > n-10 { // a restart forgets trims: older segments may come back
			have = append(have, fmt.Sprintf("%s:%d", g.Cell, g.Min))
		}
	}
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Fatalf("sealed range after the restart %v, want %v", have, want)
	}
}
