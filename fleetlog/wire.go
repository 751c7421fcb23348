// Package fleetlog is fleet durability for a node (CELLD_DURABILITY=fleet):
// the owner side (Log: the replication group, its node log record, appends
// to the members, write-behind bookkeeping), the follower side (Disk: the
// segments retained on this node's disk for other nodes' sessions), the
// peer routes between them, and the takeover recovery gate (Recoverer),
// which settles a dead session's log before one of its cells is restored.
// The rules are fleet/core's (log.go there), tested by its simulator.
package fleetlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/celldgo/celld/cell"
)

// Peer routes (signed like every peer request).
const (
	PathHello  = "/__celld/peer/log/hello"  // → {"disk"}
	PathAppend = "/__celld/peer/log/append" // ?node&session&disk, body: frames
	PathTrim   = "/__celld/peer/log/trim"   // ?session, body: JSON trims
	PathSeal   = "/__celld/peer/log/seal"   // ?session&disk → frames of every retained segment
	PathForget = "/__celld/peer/log/forget" // ?session: a sealed session's tails are in the bucket
)

// Frames: each segment is
//
//	u16 len(cell) | cell | u64 epoch | u64 min | u64 max | u64 after | u32 len(data) | data
//
// and a stream of them ends with a zero-length cell ("end"), so a reader
// can tell a whole answer from one cut short.
const maxFrameData = cell.FleetMaxSegment + 1<<20

var errTruncated = errors.New("segment stream ended without its end mark")

func writeFrame(w io.Writer, s cell.Segment) error {
	var h [2]byte
	binary.BigEndian.PutUint16(h[:], uint16(len(s.Cell)))
	var nums [36]byte
	binary.BigEndian.PutUint64(nums[0:], s.Epoch)
	binary.BigEndian.PutUint64(nums[8:], s.Min)
	binary.BigEndian.PutUint64(nums[16:], s.Max)
	binary.BigEndian.PutUint64(nums[24:], s.After)
	binary.BigEndian.PutUint32(nums[32:], uint32(len(s.Data)))
	for _, b := range [][]byte{h[:], []byte(s.Cell), nums[:], s.Data} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func writeEnd(w io.Writer) error {
	_, err := w.Write([]byte{0, 0})
	return err
}

// readFrames calls fn for each frame of r until the end mark.
func readFrames(r io.Reader, fn func(cell.Segment) error) error {
	br := bufio.NewReader(r)
	for {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return errTruncated
		}
		n := binary.BigEndian.Uint16(h[:])
		if n == 0 {
			return nil
		}
		name := make([]byte, n)
		var nums [36]byte
		if _, err := io.ReadFull(br, name); err != nil {
			return errTruncated
		}
		if _, err := io.ReadFull(br, nums[:]); err != nil {
			return errTruncated
		}
		s := cell.Segment{Cell: string(name), Epoch: binary.BigEndian.Uint64(nums[0:]), Min: binary.BigEndian.Uint64(nums[8:]),
			Max: binary.BigEndian.Uint64(nums[16:]), After: binary.BigEndian.Uint64(nums[24:])}
		size := binary.BigEndian.Uint32(nums[32:])
		if size > maxFrameData || s.Min == 0 || s.Max < s.Min || s.Epoch == 0 {
			return fmt.Errorf("read segment frame: bad header (%s e%d %d-%d, %d bytes)", s.Cell, s.Epoch, s.Min, s.Max, size)
		}
		s.Data = make([]byte, size)
		if _, err := io.ReadFull(br, s.Data); err != nil {
			return errTruncated
		}
		if err := fn(s); err != nil {
			return err
		}
	}
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
