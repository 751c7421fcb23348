package cell

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/superfly/ltx"
)

// encodeWith writes one LTX file of pages (pgno → 4 KiB page) with enc.
func encodeWith(t *testing.T, enc *ltx.Encoder, minTXID uint64, pgnos []uint32, pages map[uint32][]byte) {
	t.Helper()
	hdr := ltx.Header{Version: ltx.Version, PageSize: 4096, Commit: pgnos[len(pgnos)-1],
		MinTXID: ltx.TXID(minTXID), MaxTXID: ltx.TXID(minTXID + 2), Timestamp: 1700000000000}
	if minTXID > 1 {
		hdr.PreApplyChecksum = ltx.ChecksumFlag | ltx.Checksum(minTXID)
	}
	if err := enc.EncodeHeader(hdr); err != nil {
		t.Fatal(err)
	}
	for _, pgno := range pgnos {
		if err := enc.EncodePage(ltx.PageHeader{Pgno: pgno}, pages[pgno]); err != nil {
			t.Fatal(err)
		}
	}
	enc.SetPostApplyChecksum(ltx.ChecksumFlag | ltx.Checksum(minTXID+7))
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

// A pooled encoder, used again and again (and left half-way through a
// file once), writes exactly what a new ltx.Encoder writes.
func TestEncoderReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		minTXID := uint64(1) // a snapshot: every page 1..n
		if round%3 != 0 {
			minTXID = uint64(2 + rng.IntN(100))
		}
		n := 1 + rng.IntN(12)
		pages := map[uint32][]byte{}
		var pgnos []uint32
		for pgno := uint32(1); len(pgnos) < n; pgno++ {
			if minTXID > 1 {
				pgno += uint32(rng.IntN(3))
			}
			p := make([]byte, 4096)
			// Some pages compress well, some not at all.
			for i := range p[:rng.IntN(4096)] {
				p[i] = byte(rng.IntN(256))
			}
			pages[pgno], pgnos = p, append(pgnos, pgno)
		}
		var want bytes.Buffer
		fresh, err := ltx.NewEncoder(&want)
		if err != nil {
			t.Fatal(err)
		}
		encodeWith(t, fresh, minTXID, pgnos, pages)

		var got bytes.Buffer
		pe, err := getEncoder(&got)
		if err != nil {
			t.Fatal(err)
		}
		encodeWith(t, &pe.enc, minTXID, pgnos, pages)
		putEncoder(pe)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("round %d: a reused encoder wrote %d bytes that differ from a new one's %d", round, got.Len(), want.Len())
		}
		if round%5 == 4 {
			// Abandon a file half-way: the next user must not see it.
			var junk bytes.Buffer
			pe, err := getEncoder(&junk)
			if err != nil {
				t.Fatal(err)
			}
			if err := pe.enc.EncodeHeader(ltx.Header{Version: ltx.Version, PageSize: 4096, Commit: 9, MinTXID: 1, MaxTXID: 1, Timestamp: 1}); err != nil {
				t.Fatal(err)
			}
			if err := pe.enc.EncodePage(ltx.PageHeader{Pgno: 1}, pages[pgnos[0]]); err != nil {
				t.Fatal(err)
			}
			putEncoder(pe)
		}
	}
}

// BenchmarkEncodeSegment: encoding a two-page segment, the LTX of a small
// commit, with the pooled encoder.
func BenchmarkEncodeSegment(b *testing.B) {
	page := make([]byte, 4096)
	for i := range 200 {
		page[i] = byte(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		var buf bytes.Buffer
		pe, err := getEncoder(&buf)
		if err != nil {
			b.Fatal(err)
		}
		enc := &pe.enc
		if err := enc.EncodeHeader(ltx.Header{Version: ltx.Version, PageSize: 4096, Commit: 3, MinTXID: 5, MaxTXID: 5, PreApplyChecksum: ltx.ChecksumFlag | 1, Timestamp: 1}); err != nil {
			b.Fatal(err)
		}
		for pgno := uint32(2); pgno <= 3; pgno++ {
			if err := enc.EncodePage(ltx.PageHeader{Pgno: pgno}, page); err != nil {
				b.Fatal(err)
			}
		}
		enc.SetPostApplyChecksum(ltx.ChecksumFlag | 2)
		err = enc.Close()
		putEncoder(pe)
		if err != nil {
			b.Fatal(err)
		}
	}
}
