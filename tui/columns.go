package tui

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/celldgo/celld/server/api"
)

// column is one column of the fleet table: its header, how a node's cell
// reads, and how two nodes compare when the table is sorted by it (in the
// order that is most useful first: problems, the busiest, the largest).
type column struct {
	name    string
	right   bool // numeric: right-aligned
	cell    func(NodeRow) string
	compare func(a, b NodeRow) int
}

// SortKey is the column the fleet table is sorted by: an index into
// columns.
type SortKey int

// The columns, in table order. s cycles the sort through all of them.
const (
	SortNode SortKey = iota
	SortAddress
	SortStatus
	SortDeploy
	SortReqRate
	SortErrRate
	SortOccupied
	SortActivating
	SortEvicting
	SortRestoring
	SortReleasing
	SortSockets
	SortRSS
	SortLease
	sortKeys
)

func (k SortKey) String() string {
	if k < 0 || k >= sortKeys {
		return "node"
	}
	return strings.ToLower(columns[k].name)
}

var statusRank = map[Status]int{StatusDead: 0, StatusGone: 1, StatusUnreachable: 2, StatusFenced: 3, StatusDraining: 4, StatusOK: 5}

// live is the node's last answer when it answered the last poll.
func live(r NodeRow) bool { return r.Status.Answering() && r.State != nil }

// counter is a column of one of a live node's numbers (more first).
func counter(name string, v func(NodeRow) int) column {
	return column{name: name, right: true,
		cell: func(r NodeRow) string {
			if !live(r) {
				return "-"
			}
			return fmt.Sprint(v(r))
		},
		compare: func(a, b NodeRow) int { return cmp.Compare(orMinus(b, v), orMinus(a, v)) },
	}
}

func orMinus(r NodeRow, v func(NodeRow) int) int {
	if !live(r) {
		return -1
	}
	return v(r)
}

// rate is a column of a per-second rate (more first).
func rate(name string, v func(NodeRow) float64) column {
	val := func(r NodeRow) float64 {
		if !live(r) || !r.HasRate {
			return -1
		}
		return v(r)
	}
	return column{name: name, right: true,
		cell: func(r NodeRow) string {
			if val(r) < 0 {
				return "-"
			}
			return fmtRate(v(r))
		},
		compare: func(a, b NodeRow) int { return cmp.Compare(val(b), val(a)) },
	}
}

var columns = [sortKeys]column{
	SortNode:    {name: "NODE", cell: func(r NodeRow) string { return orQ(r.Node) }, compare: func(a, b NodeRow) int { return 0 }},
	SortAddress: {name: "ADDRESS", cell: func(r NodeRow) string { return r.Addr }, compare: func(a, b NodeRow) int { return cmp.Compare(a.Addr, b.Addr) }},
	SortStatus: {name: "HEALTH", cell: func(r NodeRow) string { return string(r.Status) },
		compare: func(a, b NodeRow) int { return cmp.Compare(statusRank[a.Status], statusRank[b.Status]) }},
	SortDeploy:     {name: "DEPLOY", cell: deployCell, compare: func(a, b NodeRow) int { return cmp.Compare(deployCell(a), deployCell(b)) }},
	SortReqRate:    rate("REQ/S", func(r NodeRow) float64 { return r.ReqPerSec }),
	SortErrRate:    rate("ERR/S", func(r NodeRow) float64 { return r.ErrPerSec }),
	SortOccupied:   counter("OCCUPIED", func(r NodeRow) int { return r.State.Counters.Occupied }),
	SortActivating: counter("ACTIVATE", func(r NodeRow) int { return r.State.Counters.Activating }),
	SortEvicting:   counter("EVICT", func(r NodeRow) int { return r.State.Counters.Evicting }),
	SortRestoring:  counter("RESTORE", func(r NodeRow) int { return r.State.Counters.Restoring }),
	SortReleasing:  counter("RELEASE", func(r NodeRow) int { return r.State.Counters.Releasing }),
	SortSockets:    counter("WS", func(r NodeRow) int { return r.State.Counters.WebSockets }),
	SortRSS: {name: "RSS", right: true,
		cell: func(r NodeRow) string {
			if !live(r) {
				return "-"
			}
			return fmtBytes(r.State.RSSBytes)
		},
		compare: func(a, b NodeRow) int { return cmp.Compare(rssOf(b), rssOf(a)) }},
	SortLease: {name: "LEASE", right: true, cell: leaseCell, compare: func(a, b NodeRow) int { return cmp.Compare(leaseOf(a), leaseOf(b)) }},
}

func rssOf(r NodeRow) uint64 {
	if !live(r) {
		return 0
	}
	return r.State.RSSBytes
}

// leaseOf orders by lease left, the least first; no lease last.
func leaseOf(r NodeRow) int64 {
	if !r.HasLease && !live(r) {
		return 1 << 62
	}
	return r.LeaseLeftMS
}

// deployCell is the Worker version a node serves, as script@ and the
// first 8 characters of the version; "!" marks a newer version that
// failed to load.
func deployCell(r NodeRow) string {
	if r.State == nil || r.State.Deployment == "" {
		return "-"
	}
	d := r.State.Deployment
	if script, v, ok := strings.Cut(d, "@"); ok && len(v) > 8 {
		d = script + "@" + v[:8]
	}
	if r.State.LoadFailed != "" {
		d += "!"
	}
	return d
}

func fmtRate(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	case v < 10_000:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.0fk", v/1000)
	}
}

// sortRows orders rows by column k (reversed when desc), ties by node
// name, then address.
func sortRows(rows []NodeRow, k SortKey, desc bool) {
	if k < 0 || k >= sortKeys {
		k = SortNode
	}
	c := columns[k].compare
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if desc {
			a, b = b, a
		}
		if n := c(a, b); n != 0 {
			return n < 0
		}
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.Addr < b.Addr
	})
}

// nodeMatches reports whether the node itself matches filter f (a
// case-insensitive substring of its name, address, status or deployment).
func nodeMatches(r NodeRow, f string) bool {
	for _, s := range []string{r.Node, r.Addr, string(r.Status), deployCell(r)} {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

// visible reports whether the node is shown under filter f: it matches,
// or one of the cells it listed does.
func visible(r NodeRow, f string) bool {
	if f == "" || nodeMatches(r, strings.ToLower(f)) {
		return true
	}
	return r.State != nil && len(filterCells(r, f)) > 0
}

// filterCells is the cells of the node shown under filter f: all of them
// when the node itself matches, else those whose name contains f.
func filterCells(r NodeRow, f string) []api.Cell {
	if r.State == nil {
		return nil
	}
	f = strings.ToLower(f)
	if f == "" || nodeMatches(r, f) {
		return r.State.Cells
	}
	var out []api.Cell
	for _, c := range r.State.Cells {
		if strings.Contains(strings.ToLower(c.Cell), f) {
			out = append(out, c)
		}
	}
	return out
}
