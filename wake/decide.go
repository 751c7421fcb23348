package wake

// The waker's decisions, without I/O or clock: times are unix ms inputs.

// Claimable reports whether a node of session may take (or keep) the
// waker role given the current lease (nil: none): it holds it already,
// or the holder's lease has expired (an exactly-expired lease is
// claimable).
func Claimable(cur *WakerLease, session string, now int64) bool {
	return cur == nil || cur.Session == session || cur.Expires <= now
}

// Due reports whether an entry of minute is due at now: its minute has
// begun. A due entry may still name an alarm a few seconds ahead; waking
// its cell early is harmless, since the cell's own timer fires it.
func Due(minute string, now int64) bool { return minute <= Minute(now) }

// Owner is what the waker knows of a cell's ownership.
type Owner struct {
	Live  bool   // a live lease owns it: that node fires its own alarms
	Epoch uint64 // the record's epoch (0: never owned)
}

// Action is what the waker does with one due entry.
type Action int

// Actions.
const (
	Skip   Action = iota // the live owner fires it, or it is not due
	Delete               // retired: older than the cell's retirement frontier
	Wake                 // the owner is gone: acquire the cell (epoch+1) and restore it
)

func (a Action) String() string {
	switch a {
	case Delete:
		return "delete"
	case Wake:
		return "wake"
	}
	return "skip"
}

// Decide is the waker's rule for a due entry: below the retirement
// frontier it is garbage; a live owner fires its own alarms (and retires
// the entry when it supersedes it); otherwise the cell is woken, and its
// SQLite alarm state, not the entry, says whether anything runs.
func Decide(e Entry, retired *Retired, owner Owner) Action {
	if retired != nil && e.ID.Less(retired.Below) {
		return Delete
	}
	if owner.Live {
		return Skip
	}
	return Wake
}
