package cell

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/pierrec/lz4/v4"
	"github.com/superfly/ltx"
)

// DefaultMaxCellBytes is the largest database a restore rebuilds unless
// MaxCellBytes says otherwise: 10 GiB, Cloudflare's limit for one SQLite-
// backed Durable Object.
const DefaultMaxCellBytes int64 = 10 << 30

// MaxCellBytes bounds the database size (page size × page count) that an
// LTX object read from the bucket may claim. A restore refuses an object
// past it before allocating anything for it: one well-formed object with a
// huge page count in its header would otherwise make every node that
// restores the cell allocate tens of GiB and die, or write a sparse file
// of hundreds of GiB. Set once at start (CELLD_MAX_CELL_MB).
var MaxCellBytes = DefaultMaxCellBytes

// The LTX decoder trusts two numbers it reads: the page count in the
// header (it sizes the database) and a 4-byte length before each
// compressed page (it allocates that much before reading it). boundedLTX
// reads the same bytes as they pass to the decoder, and fails the read
// that would deliver a header or a length out of bounds, so the decoder
// never sees it. It understands the framing only up to the end of the page
// block; what follows (the page index, read as a stream, and a fixed-size
// trailer) allocates nothing by size.
type boundedLTX struct {
	r   io.Reader
	max int64 // MaxCellBytes when it was made

	state    int    // ltxHeader, ltxPageHeader, ltxSize, ltxData, ltxRest
	need     int    // bytes left in the current field
	buf      []byte // the current field, while it is being read (header, page header, size)
	pageSize uint32
	commit   uint32
	pages    uint32 // pages seen so far
	bound    uint32 // the largest compressed size a page may have
	err      error
}

const (
	ltxHeader = iota
	ltxPageHeader
	ltxSize
	ltxData
	ltxRest
)

func newBoundedLTX(r io.Reader, max int64) *boundedLTX {
	return &boundedLTX{r: r, max: max, state: ltxHeader, need: ltx.HeaderSize}
}

func (b *boundedLTX) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if verr := b.scan(p[:n]); verr != nil {
		b.err = verr
		return 0, verr
	}
	return n, err
}

// scan follows the framing over p, which the decoder is about to receive.
func (b *boundedLTX) scan(p []byte) error {
	for len(p) > 0 {
		switch b.state {
		case ltxRest:
			return nil
		case ltxData:
			k := min(b.need, len(p))
			b.need -= k
			p = p[k:]
			if b.need == 0 {
				b.state, b.need = ltxPageHeader, ltx.PageHeaderSize
			}
			continue
		}
		k := min(b.need, len(p))
		b.buf = append(b.buf, p[:k]...)
		b.need -= k
		p = p[k:]
		if b.need > 0 {
			continue
		}
		field := b.buf
		b.buf = b.buf[:0]
		if err := b.field(field); err != nil {
			return fmt.Errorf("%w: %w", errBadLTX, err)
		}
	}
	return nil
}

// field checks one complete field and moves to the next.
func (b *boundedLTX) field(f []byte) error {
	switch b.state {
	case ltxHeader:
		var h ltx.Header
		if err := h.UnmarshalBinary(f); err != nil {
			return fmt.Errorf("header: %w", err)
		}
		if err := h.Validate(); err != nil {
			return fmt.Errorf("header: %w", err)
		}
		if size := int64(h.Commit) * int64(h.PageSize); size > b.max {
			return fmt.Errorf("header claims a database of %d pages of %d bytes (%d MiB), over the %d MiB limit (CELLD_MAX_CELL_MB)",
				h.Commit, h.PageSize, size>>20, b.max>>20)
		}
		b.pageSize, b.commit = h.PageSize, h.Commit
		b.bound = uint32(lz4.CompressBlockBound(int(h.PageSize)))
		b.state, b.need = ltxPageHeader, ltx.PageHeaderSize
	case ltxPageHeader:
		var ph ltx.PageHeader
		if err := ph.UnmarshalBinary(f); err != nil {
			return fmt.Errorf("page header: %w", err)
		}
		if ph.IsZero() {
			b.state = ltxRest
			return nil
		}
		if ph.Flags&ltx.PageHeaderFlagSize == 0 {
			return fmt.Errorf("page %d uses the old LTX page format, which celld never writes", ph.Pgno)
		}
		if b.pages++; b.pages > b.commit {
			return fmt.Errorf("more pages than the %d the header claims", b.commit)
		}
		b.state, b.need = ltxSize, 4
	case ltxSize:
		size := binary.BigEndian.Uint32(f)
		if size == 0 || size > b.bound {
			return fmt.Errorf("page %d of the block: compressed size %d, a %d-byte page compresses to at most %d",
				b.pages, size, b.pageSize, b.bound)
		}
		b.state, b.need = ltxData, int(size)
	}
	return nil
}
