package server

import (
	"net/http"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/celldgo/celld/server/api"
)

// maxSummaryTop bounds the cells of a summary /state answer.
const maxSummaryTop = 1000

// serveState answers GET /state: everything, or with ?summary=1 the
// counters and the top N (&top=N, default 10) cells, the busiest first.
// A fleet view polls every node in summary and one node in full, so a
// poll costs the same at 10 cells as at 10,000.
func (n *node) serveState(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	st := n.state()
	if q.Get("summary") == "" || q.Get("summary") == "0" {
		writeJSON(w, http.StatusOK, st)
		return
	}
	top := 10
	if v := q.Get("top"); v != "" {
		t, err := strconv.Atoi(v)
		if err != nil || t < 0 || t > maxSummaryTop {
			http.Error(w, "top="+strconv.Quote(v)+": want a number of cells from 0 to "+strconv.Itoa(maxSummaryTop), http.StatusBadRequest)
			return
		}
		top = t
	}
	summarize(&st, top)
	writeJSON(w, http.StatusOK, st)
}

// summarize keeps the top busiest cells of st: most in flight, then the
// most recently active, then by name.
func summarize(st *api.State, top int) {
	cells := st.Cells
	sort.SliceStable(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if a.Inflight != b.Inflight {
			return a.Inflight > b.Inflight
		}
		if a.IdleMS != b.IdleMS {
			return a.IdleMS < b.IdleMS
		}
		return a.Cell < b.Cell
	})
	st.Cells = cells[:min(top, len(cells))]
	st.Summary = true
}

// requestCounter counts public Worker requests and those answered 5xx
// (publicWrap counts them).
type requestCounter struct{ total, errors atomic.Uint64 }

func (c *requestCounter) count(status int) {
	c.total.Add(1)
	if status >= 500 {
		c.errors.Add(1)
	}
}
