package cell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"

	"github.com/celldgo/celld/bucket"
)

// The head record lets a cold activation skip the LIST of a cell's LTX
// history: when an epoch ends (the cell is about to be released), its
// owner writes
//
//	cells/<cell>/ltx/head.json  {"epoch","txid","checksum","chain"}
//
// naming the objects a restore applies, in order. The record is only a
// shortcut. It is trusted only by the owner of the very next epoch
// (head.epoch == its epoch - 1), because only then is nothing newer
// possible: the sealed epoch wrote nothing after the record (it is written
// once the replicator is closed and everything is durable), and no epoch
// between exists. Every other case — no record, an older one (an owner
// that crashed, a tool, an older celld), an object it names that is gone
// or does not verify — falls back to the LIST of the prefix, so a stale or
// missing head costs time, never history.

// HeadName is the name, under LTXPrefix, of a cell's head record.
const HeadName = "head.json"

// HeadKey is the head record of cell.
func HeadKey(cell string) string { return LTXPrefix(cell) + HeadName }

// headRecord is cells/<cell>/ltx/head.json.
type headRecord struct {
	Epoch uint64 `json:"epoch"` // the epoch that ended
	TXID  uint64 `json:"txid"`  // its last transaction
	// Checksum is the LTX database checksum at TXID, 16 hex digits.
	Checksum string `json:"checksum"`
	// Chain names the objects to apply, relative to the LTX prefix
	// ("e<epoch:016x>/<min:016x>-<max:016x>.ltx"): a snapshot, then each
	// object starting right after the one before, ending at TXID.
	Chain []string `json:"chain"`
}

// segments parses the chain and checks that it runs from a snapshot to
// TXID without a gap.
func (h headRecord) segments(cell string) ([]segment, error) {
	if len(h.Chain) == 0 || h.Epoch == 0 {
		return nil, errors.New("empty")
	}
	prefix := LTXPrefix(cell)
	var chain []segment
	for i, name := range h.Chain {
		s, ok := parseSegmentKey(prefix, prefix+name)
		switch {
		case !ok:
			return nil, fmt.Errorf("%q is not an LTX object name", name)
		case i == 0 && s.min != 1:
			return nil, fmt.Errorf("%s is not a snapshot", name)
		case i > 0 && s.min != chain[i-1].max+1:
			return nil, fmt.Errorf("%s does not follow %s", name, h.Chain[i-1])
		}
		chain = append(chain, s)
	}
	if last := chain[len(chain)-1]; last.max != h.TXID {
		return nil, fmt.Errorf("chain ends at TXID %d, record at %d", last.max, h.TXID)
	}
	return chain, nil
}

// PendingRestore is a restore begun before the epoch it restores for is
// known. While the caller acquires the cell, it reads the head record,
// fetches the objects it names and applies them to a file beside the
// database, so that both the reads and the work of applying them overlap
// the ownership write; Restore then only checks the epoch and renames the
// file into place.
type PendingRestore struct {
	store  bucket.Store
	cell   string
	path   string
	cancel context.CancelFunc
	done   chan struct{} // closed when the fields below are set
	head   headRecord
	chain  []segment
	headOK bool     // head and chain are a well-formed record
	tmp    string   // the applied file, if err is nil
	st     *dbState // its checksums
	err    error    // no usable head record, or applying it failed
	once   sync.Once
}

// PrepareRestore starts restoring cell for the database at path, from its
// head record. Finish it with Restore, or Cancel it; its work ends with
// ctx.
func PrepareRestore(ctx context.Context, store bucket.Store, cell, path string) *PendingRestore {
	ctx, cancel := context.WithCancel(ctx)
	p := &PendingRestore{store: store, cell: cell, path: path, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		data, _, err := store.Get(ctx, HeadKey(cell))
		if err != nil {
			p.err = err
			return
		}
		if err := json.Unmarshal(data, &p.head); err != nil {
			p.err = fmt.Errorf("decode %s: %w", HeadKey(cell), err)
			return
		}
		if p.chain, err = p.head.segments(cell); err != nil {
			p.err = fmt.Errorf("%s: %w", HeadKey(cell), err)
			return
		}
		sum, err := strconv.ParseUint(p.head.Checksum, 16, 64)
		if err != nil || sum == 0 {
			p.err = fmt.Errorf("%s: checksum %q", HeadKey(cell), p.head.Checksum)
			return
		}
		p.headOK = true
		p.tmp, p.st, p.err = applyToTemp(ctx, path, p.chain, newChainFetch(ctx, store, p.chain), sum)
	}()
	return p
}

// Cancel stops a restore that will not be finished and removes what it
// wrote (once its work has stopped).
func (p *PendingRestore) Cancel() {
	p.once.Do(func() {
		p.cancel()
		go func() {
			<-p.done
			if p.tmp != "" {
				os.Remove(p.tmp)
			}
		}()
	})
}

// Restore finishes the restore into path for the owner of epoch (just
// acquired): from the head record if it describes epoch - 1, else as
// Restore does, from a LIST of the history. The result is the same either
// way; only the number of round trips differs.
func (p *PendingRestore) Restore(ctx context.Context, epoch uint64, log *slog.Logger) (RestoreInfo, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		p.Cancel()
		return RestoreInfo{}, fmt.Errorf("restore cell %s: %w", p.cell, context.Cause(ctx))
	}
	why := ""
	switch {
	case p.headOK && p.err != nil && epoch > 0 && p.head.Epoch == epoch-1:
		// The record is the sealed end of the epoch before ours, but its
		// chain did not hold up: the listing may find another way there,
		// and must not stop short of it.
		info, err := Restore(ctx, p.store, p.cell, p.path)
		if err == nil && info.TXID < p.head.TXID {
			err = fmt.Errorf("restore cell %s: %w: epoch %d ended at TXID %d (%s), the history reaches only TXID %d: %w",
				p.cell, ErrBrokenHistory, p.head.Epoch, p.head.TXID, HeadKey(p.cell), info.TXID, p.err)
		}
		return info, err
	case p.err != nil:
		if !errors.Is(p.err, bucket.ErrNotFound) {
			why = p.err.Error()
		}
	case epoch == 0 || p.head.Epoch != epoch-1:
		why = fmt.Sprintf("head record is of epoch %d, this is epoch %d", p.head.Epoch, epoch)
	default:
		tmp := p.tmp
		p.tmp = "" // installed or removed here, not by Cancel
		if err := install(tmp, p.path); err != nil {
			p.Cancel()
			return RestoreInfo{}, fmt.Errorf("restore cell %s: %w", p.cell, err)
		}
		p.Cancel()
		return restoredInfo(p.chain, p.st), nil
	}
	if why != "" && log != nil {
		// The listing meets a bad object again if it is still needed,
		// and then reports it properly.
		log.Debug("restore from a listing", "cell", p.cell, "epoch", epoch, "why", why)
	}
	p.Cancel()
	return Restore(ctx, p.store, p.cell, p.path)
}

// Seal writes the head record of this epoch: where its history ends and
// the objects a restore applies to reach it, so that the next owner
// restores without listing. Call it after a successful Close, and only
// when the epoch is over (right before the cell is released): nothing may
// write into this epoch afterwards, which is why a cell whose epoch
// continues in another process (a preserved handoff) must not be sealed.
// It reports false, writing nothing, when this replicator does not know
// its whole chain (it continued from a position without one and has not
// written a snapshot since).
func (r *Replicator) Seal(ctx context.Context) (bool, error) {
	if !r.closing {
		return false, errors.New("seal: the replicator is not closed")
	}
	r.mu.Lock()
	durable, failed, known := r.durable, r.err != nil, r.chainKnown
	chain := append([]segment(nil), r.chain...)
	r.mu.Unlock()
	if failed || durable != r.captured.Load() || !known || len(chain) == 0 || chain[len(chain)-1].max != durable {
		return false, nil
	}
	prefix := LTXPrefix(r.cfg.Cell)
	h := headRecord{Epoch: r.cfg.Epoch, TXID: durable, Checksum: r.state.checksum().String()}
	for _, s := range chain {
		h.Chain = append(h.Chain, s.key[len(prefix):])
	}
	if _, err := h.segments(r.cfg.Cell); err != nil {
		return false, fmt.Errorf("seal: %w", err) // a bug: never write a head that cannot verify
	}
	data, err := json.Marshal(h)
	if err != nil {
		return false, fmt.Errorf("seal: %w", err)
	}
	if _, err := r.cfg.Store.Put(ctx, HeadKey(r.cfg.Cell), data, bucket.Cond{}); err != nil {
		return false, fmt.Errorf("seal: write %s: %w", HeadKey(r.cfg.Cell), err)
	}
	return true, nil
}

// chainFrom is the chain a replicator starts from: the one its restore
// applied, if it names every object up to the restored TXID.
func chainFrom(cell string, from RestoreInfo) ([]segment, bool) {
	if from.TXID == 0 {
		return nil, true // a new cell: its first LTX is a snapshot
	}
	prefix := LTXPrefix(cell)
	var chain []segment
	for _, k := range from.Chain {
		s, ok := parseSegmentKey(prefix, k)
		if !ok || (len(chain) == 0 && s.min != 1) || (len(chain) > 0 && s.min != chain[len(chain)-1].max+1) {
			return nil, false
		}
		chain = append(chain, s)
	}
	if len(chain) == 0 || chain[len(chain)-1].max != from.TXID {
		return nil, false
	}
	return chain, true
}

// chainUploaded records an LTX object now in the bucket in the chain a
// Seal writes. The uploader ships segments in TXID order; a snapshot or a
// merge runs beside it and may finish before or after the segments it
// covers (a merge starts only once everything before its range is up, so
// the chain always reaches its start). Call with r.mu held.
func (r *Replicator) chainUploaded(s segment) {
	if s.max <= r.chainSnap {
		return // covered by a snapshot that finished first
	}
	if s.min == 1 {
		// A snapshot replaces everything up to it; objects after it that
		// are already up stay.
		chain := []segment{s}
		for _, c := range r.chain {
			if c.min > s.max {
				chain = append(chain, c)
			}
		}
		r.chain, r.chainKnown, r.chainSnap = chain, true, s.max
		for i := 1; i < len(chain); i++ {
			if chain[i].min != chain[i-1].max+1 {
				r.chainKnown = false
			}
		}
		return
	}
	if n := len(r.chain); n > 0 && s.min == r.chain[n-1].max+1 {
		r.chain = append(r.chain, s) // the next segment: the common case
		return
	}
	for i := len(r.chain) - 1; i >= 0 && r.chain[i].max >= s.max; i-- {
		if r.chain[i].min <= s.min {
			return // covered by a merge that finished first
		}
	}
	// A merge replaces the objects it covers that are already up; a
	// segment goes at the end.
	var head, tail []segment
	for _, c := range r.chain {
		switch {
		case c.max < s.min:
			head = append(head, c)
		case c.min > s.max:
			tail = append(tail, c)
		}
	}
	if len(head) == 0 || head[len(head)-1].max+1 != s.min || (len(tail) > 0 && tail[0].min != s.max+1) {
		r.chainKnown = false // not reachable from what we know
	}
	r.chain = append(append(head, s), tail...)
}
