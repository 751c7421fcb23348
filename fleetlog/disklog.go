package fleetlog

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultCompactAt is the size from which a follower's session log whose
// records are three quarters trimmed is rewritten with only its live
// records (Disk.Trim).
const DefaultCompactAt = 16 << 20

// addRef indexes a record appended to the log.
func (sl *sessionLog) addRef(r recordRef) {
	if sl.byKey == nil {
		sl.byKey, sl.trimAt = map[tailKey][]int{}, map[tailKey]int{}
	}
	sl.byKey[r.key] = append(sl.byKey[r.key], len(sl.index))
	sl.index = append(sl.index, r)
	sl.live += r.n
}

// trimKey counts k's records through txid dead: only the records not
// trimmed before are visited (a cell's records end at rising TXIDs).
func (sl *sessionLog) trimKey(k tailKey, txid uint64) {
	pos, i := sl.byKey[k], sl.trimAt[k]
	for i < len(pos) && sl.index[pos[i]].max <= txid {
		sl.live -= sl.index[pos[i]].n
		i++
	}
	if sl.trimAt != nil {
		sl.trimAt[k] = i
	}
}

func (sl *sessionLog) resetIndex() {
	sl.index, sl.byKey, sl.trimAt, sl.live = nil, nil, nil, 0
}

// compactDue: the log is large and mostly trimmed. Call with d.mu held.
func (d *Disk) compactDue(sl *sessionLog) bool {
	at := d.CompactAt
	if at <= 0 {
		at = DefaultCompactAt
	}
	return sl.f != nil && !sl.sealed && sl.failed == nil && sl.size >= at && sl.live*4 < sl.size
}

// compact rewrites session's log with only its live records: written to
// a new file, fsynced, renamed over the log (the directory fsynced). Its
// records are all durable then, so every append waiting for an fsync is
// answered by it. Appends and fsyncs wait meanwhile (it holds both
// locks); a failure leaves the old log as it was, and a directory fsync
// that failed after the rename makes the log refuse further appends.
func (d *Disk) compact(session string, sl *sessionLog) {
	sl.smu.Lock()
	defer sl.smu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.compactDue(sl) || d.sessions[session] != sl {
		return
	}
	path := filepath.Join(d.sessionDir(session), "log")
	tmp := path + ".compact"
	nf, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return
	}
	abandon := func() {
		nf.Close()
		os.Remove(tmp)
	}
	var kept []recordRef
	var off int64
	for _, r := range sl.index {
		if r.max <= sl.trimmed[r.key] {
			continue
		}
		rec := make([]byte, r.n)
		if _, err := sl.f.ReadAt(rec, r.off); err != nil {
			abandon()
			return
		}
		if _, err := nf.WriteAt(rec, off); err != nil {
			abandon()
			return
		}
		r.off = off
		kept = append(kept, r)
		off += r.n
	}
	if err := nf.Sync(); err != nil {
		abandon()
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		abandon()
		return
	}
	old := sl.f
	sl.f, sl.size = nf, off
	old.Close()
	sl.resetIndex()
	for _, r := range kept {
		sl.addRef(r)
	}
	sl.gen++
	if dir, err := os.Open(filepath.Dir(path)); err != nil {
		sl.failed = fmt.Errorf("compact session log: %w", err)
	} else {
		if err := dir.Sync(); err != nil {
			sl.failed = fmt.Errorf("compact session log: fsync directory: %w", err)
		}
		dir.Close()
	}
	if sl.failed == nil {
		sl.syncedGen, sl.synced = sl.gen, sl.size
	}
}
