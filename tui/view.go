package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/celldgo/celld/server/api"
)

// barWidth is the drain progress bar's width in cells.
const barWidth = 20

// View draws the fleet from the last snapshot. It reads no clock and does
// no I/O: every relative time is against the snapshot's or a node's NowMS.
func (m Model) View() string {
	var lines []string
	order := m.sortBy.String()
	if m.desc {
		order += ", reversed"
	}
	head := fmt.Sprintf(" · sort: %s · every %s", order, m.interval)
	if m.filter != "" && !m.filtering {
		head += fmt.Sprintf(" · filter: %q", m.filter)
	}
	lines = append(lines, m.st.title.Render(titleLine(m.snap))+m.st.faint.Render(head))
	if m.filtering {
		lines = append(lines, "/"+m.filter+"█")
	}
	if m.help {
		return m.fit(append(lines, helpLines()...), nil)
	}
	if m.snap.Polls == 0 {
		lines = append(lines, "", "polling…")
		return m.fit(lines, nil)
	}
	if m.snap.Error != "" {
		lines = append(lines, m.st.warn.Render("! bucket: "+m.snap.Error+" (showing the nodes already known)"))
	}
	lines = append(lines, "")
	rows := m.rows()
	switch {
	case len(rows) == 0 && len(m.snap.Nodes) > 0:
		lines = append(lines, fmt.Sprintf("no node or cell matches %q (esc clears the filter)", m.filter))
	case len(rows) == 0:
		lines = append(lines, "no nodes: no node lease in the bucket")
	default:
		lines = append(lines, m.st.fleetTable(m.snap, rows, m.selected, true, m.sortBy, m.desc)...)
	}
	footer := []string{"", m.st.faint.Render(footerHelp)}
	if m.detail {
		if r, ok := m.snap.Row(m.selected); ok && visible(r, m.filter) {
			lines = append(lines, "")
			budget := 0 // cell lines the detail pane may use; 0: all
			if m.height > 0 {
				budget = max(1, m.height-len(lines)-len(footer)-2) // less its title and header
			}
			lines = append(lines, m.st.detail(m.snap, r, m.filter, m.width, budget)...)
		}
	}
	return m.fit(lines, footer)
}

// fit appends the footer and cuts every line to the window width.
func (m Model) fit(lines, footer []string) string {
	lines = append(lines, footer...)
	if m.width > 0 {
		cut := lipgloss.NewStyle().MaxWidth(m.width)
		for i, l := range lines {
			lines[i] = strings.TrimRight(cut.Render(l), " ")
		}
	}
	return strings.Join(lines, "\n")
}

// RenderText draws one snapshot for a pipe or a script (celld top --once):
// the fleet table and totals, no selection, no colour unless the profile
// has it.
func RenderText(s Snapshot) string {
	st := newStyles()
	lines := []string{st.title.Render(titleLine(s))}
	if s.Error != "" {
		lines = append(lines, "! bucket: "+s.Error)
	}
	rows := append([]NodeRow(nil), s.Nodes...)
	sortRows(rows, SortNode, false)
	if len(rows) == 0 {
		lines = append(lines, "no nodes: no node lease in the bucket")
	} else {
		lines = append(lines, st.fleetTable(s, rows, "", false, SortNode, false)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

func titleLine(s Snapshot) string {
	if s.Polls == 0 {
		return "celld top"
	}
	nodes := "nodes"
	if len(s.Nodes) == 1 {
		nodes = "node"
	}
	return fmt.Sprintf("celld top · %d %s · %s UTC", len(s.Nodes), nodes, time.UnixMilli(s.NowMS).UTC().Format("15:04:05"))
}

// fleetTable draws the table: one line per node, with the lines that
// explain it (drain progress, why it does not answer) beneath, then the
// totals. sortBy marks the sorted column's header.
func (st styles) fleetTable(s Snapshot, rows []NodeRow, selected string, marker bool, sortBy SortKey, desc bool) []string {
	header := make([]string, len(columns))
	for i, c := range columns {
		header[i] = c.name
	}
	if marker && sortBy >= 0 && sortBy < sortKeys {
		arrow := "▼"
		if desc {
			arrow = "▲"
		}
		header[sortBy] += arrow
	}
	cells := [][]string{header}
	for _, r := range rows {
		cells = append(cells, rowCells(r))
	}
	t := s.Totals
	total := make([]string, len(columns))
	total[SortNode] = "TOTAL"
	total[SortReqRate], total[SortErrRate] = "-", "-"
	for _, r := range rows {
		if r.HasRate && live(r) {
			total[SortReqRate], total[SortErrRate] = fmtRate(t.ReqPerSec), fmtRate(t.ErrPerSec)
		}
	}
	total[SortOccupied], total[SortActivating], total[SortEvicting] = fmt.Sprint(t.Counters.Occupied), fmt.Sprint(t.Counters.Activating), fmt.Sprint(t.Counters.Evicting)
	total[SortRestoring], total[SortReleasing], total[SortSockets] = fmt.Sprint(t.Counters.Restoring), fmt.Sprint(t.Counters.Releasing), fmt.Sprint(t.Counters.WebSockets)
	total[SortRSS] = fmtBytes(t.RSSBytes)
	cells = append(cells, total)
	widths := make([]int, len(columns))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	pad := func(i int, c string) string {
		gap := strings.Repeat(" ", widths[i]-lipgloss.Width(c))
		if columns[i].right {
			return gap + c
		}
		return c + gap
	}
	line := func(row []string, style func(i int, c string) string) string {
		parts := make([]string, len(row))
		for i, c := range row {
			parts[i] = style(i, pad(i, c))
		}
		return strings.TrimRight(strings.Join(parts, "  "), " ")
	}
	plain := func(_ int, c string) string { return c }
	indent := ""
	if marker {
		indent = "  "
	}

	out := []string{indent + st.header.Render(line(header, plain))}
	for i, r := range rows {
		prefix := indent
		text := ""
		if marker && r.Addr == selected {
			prefix = "> "
			text = st.selected.Render(line(cells[i+1], plain))
		} else {
			text = line(cells[i+1], func(i int, c string) string {
				if i == int(SortStatus) {
					return st.status[r.Status].Render(c)
				}
				return c
			})
		}
		out = append(out, prefix+text)
		for _, sub := range st.rowNotes(s, r) {
			out = append(out, indent+"    "+sub)
		}
	}
	out = append(out, indent+st.title.Render(line(cells[len(cells)-1], plain)))
	out = append(out, indent+fleetSummary(t))
	return out
}

// rowCells is a node's line in the table. A node that did not answer the
// last poll shows no counters: its last answer is history, not state.
func rowCells(r NodeRow) []string {
	c := make([]string, len(columns))
	for i, col := range columns {
		c[i] = col.cell(r)
	}
	return c
}

func leaseCell(r NodeRow) string {
	answering := r.Status.Answering() && r.State != nil
	switch {
	case r.Status == StatusGone:
		return "none"
	case r.HasLease || (answering && r.State.LeaseExpiresMS > 0):
		if r.LeaseLeftMS < 0 {
			return "expired"
		}
		return fmtMS(r.LeaseLeftMS)
	case answering && r.State.Draining:
		return "released" // deleted at the end of the drain, exit is next
	default:
		return "-"
	}
}

// rowNotes are the lines under a node: drain progress, or why it is not
// answering.
func (st styles) rowNotes(s Snapshot, r NodeRow) []string {
	switch r.Status {
	case StatusDraining:
		return []string{st.drainBar(r)}
	case StatusFenced:
		return []string{st.warn.Render("! fenced: it lost its lease and serves nothing until restarted")}
	case StatusUnreachable:
		return []string{st.warn.Render("! " + r.Err + " · " + lastAnswer(s, r))}
	case StatusDead:
		return []string{st.warn.Render("! " + r.Note + " · " + lastAnswer(s, r))}
	case StatusGone:
		note := r.Note
		if r.SeenDraining && r.State != nil && r.State.DrainCells > 0 {
			note += fmt.Sprintf(" (%d/%d released when last seen)", r.State.DrainReleased, r.State.DrainCells)
		}
		return []string{st.faint.Render(note + " · " + lastAnswer(s, r))}
	}
	return nil
}

// drainBar is released / cells at drain start, with the deadline by the
// node's own clock.
func (st styles) drainBar(r NodeRow) string {
	s := r.State
	if s.DrainCells == 0 {
		return "drain (" + orQ(s.Mode) + "): no cells to release"
	}
	done := min(s.DrainReleased, s.DrainCells)
	filled := done * barWidth / s.DrainCells
	bar := st.bar.Render(strings.Repeat("█", filled)) + st.barEmpty.Render(strings.Repeat("░", barWidth-filled))
	mode := ""
	if s.Mode != "" {
		mode = " (" + s.Mode + ")"
	}
	out := fmt.Sprintf("drain%s %s %d/%d released (%d%%)", mode, bar, s.DrainReleased, s.DrainCells, done*100/s.DrainCells)
	if s.DrainDeadlineMS > 0 && s.NowMS > 0 {
		out += " · deadline in " + fmtMS(max(0, s.DrainDeadlineMS-s.NowMS))
	}
	return out
}

func lastAnswer(s Snapshot, r NodeRow) string {
	if r.LastAnswerMS == 0 {
		return "never answered"
	}
	return "last answer " + fmtMS(s.NowMS-r.LastAnswerMS) + " ago"
}

func fleetSummary(t Totals) string {
	out := fmt.Sprintf("fleet: %d ok", t.OK)
	// The other statuses only when some node has them.
	for _, n := range []struct {
		count int
		name  Status
	}{{t.Draining, StatusDraining}, {t.Fenced, StatusFenced}, {t.Unreachable, StatusUnreachable}, {t.Dead, StatusDead}, {t.Gone, StatusGone}} {
		if n.count > 0 {
			out += fmt.Sprintf(" · %d %s", n.count, n.name)
		}
	}
	out += fmt.Sprintf(" · %d cells", t.Cells)
	out += fmt.Sprintf(" · %d alarms armed (%d due) · %d wake-ups due", t.Counters.AlarmsArmed, t.Counters.AlarmsDue, t.Counters.WakeupsDue)
	if t.DrainCells > 0 {
		out += fmt.Sprintf(" · drain %d/%d released", t.DrainReleased, t.DrainCells)
	}
	switch {
	case t.FleetMode > 0 && t.BucketMode > 0:
		out += fmt.Sprintf(" · durability MIXED (%d fleet, %d bucket)", t.FleetMode, t.BucketMode)
	case t.FleetMode > 0:
		out += " · durability fleet"
	}
	if t.Recovering > 0 {
		out += fmt.Sprintf(" · %d recoveries in progress", t.Recovering)
	}
	return out
}

// durabilityLines are a node's durability in its detail pane (none for a
// node that does not report it).
func durabilityLines(d api.Durability) []string {
	switch d.Mode {
	case "":
		return nil
	case "fleet":
	default:
		return []string{"durability " + d.Mode}
	}
	out := "durability fleet · "
	if len(d.Followers) == 0 {
		out += "no followers (bucket proofs)"
	} else {
		names := make([]string, len(d.Followers))
		for i, f := range d.Followers {
			names[i] = f.Node
		}
		out += "followers " + strings.Join(names, ", ")
	}
	if d.Joining != "" {
		out += " (" + d.Joining + " joining)"
	}
	switch {
	case d.LogRecord == "":
		out += " · log not yet created"
	case d.LogFenced:
		out += " · log " + d.LogRecord + " by a successor: fenced"
	default:
		out += " · log " + d.LogRecord
	}
	if d.RecoveryInProgress > 0 {
		out += fmt.Sprintf(" · recovering %d", d.RecoveryInProgress)
	}
	if d.Recovered > 0 {
		out += fmt.Sprintf(" · recovered %d", d.Recovered)
	}
	second := fmt.Sprintf("retains %s for the bucket · %d log packs (%d live) · this disk holds %s for %d sessions",
		fmtBytes(uint64(max(0, d.RetainedBytes))), d.Packs, d.LivePacks, fmtBytes(uint64(max(0, d.FollowerRetainedBytes))), d.FollowerSessions)
	// How the writes were proven: a group that keeps failing shows as
	// bucket proofs growing, a slow member as hedged appends.
	third := fmt.Sprintf("proofs: %d segments on followers, %d by the bucket · %d appends hedged",
		d.FleetAcked, d.BucketProofs, d.AppendsHedged)
	return []string{out, second, third}
}

// detail is the selected node's pane: who it is, then its cells with phase
// and epoch, at most budget of them (0: all).
func (st styles) detail(s Snapshot, r NodeRow, filter string, width, budget int) []string {
	title := fmt.Sprintf("── %s · %s · %s", orQ(r.Node), r.Addr, r.Status)
	if r.State == nil {
		return []string{st.title.Render(title), "no answer yet: nothing to show"}
	}
	n := r.State
	title += fmt.Sprintf(" · session %s · version %s · up %s · rss %s · heap %s", orQ(n.Session), orQ(n.Version),
		fmtMS(n.UptimeMS), fmtBytes(n.RSSBytes), fmtBytes(n.HeapBytes))
	out := []string{st.title.Render(title)}
	out = append(out, durabilityLines(n.Durability)...)
	if n.Deployment != "" {
		out = append(out, "serving "+n.Deployment)
	}
	if n.LoadFailed != "" {
		out = append(out, st.warn.Render(fmt.Sprintf("✘ version %s did not load (still serving the previous one): %s", n.LoadFailed, n.LoadError)))
	}
	if !r.Status.Answering() {
		out = append(out, st.faint.Render("as of the "+lastAnswer(s, r)))
	}
	cells := filterCells(r, filter)
	if n.Summary && len(n.Cells) < cellCount(n) {
		out = append(out, st.faint.Render(fmt.Sprintf("the %d busiest of %d cells (the full list comes with the next poll)", len(n.Cells), cellCount(n))))
	}
	if len(cells) < len(n.Cells) {
		out = append(out, st.faint.Render(fmt.Sprintf("%d of %d cells match %q", len(cells), len(n.Cells), filter)))
	}
	if len(n.Cells) == 0 {
		return append(out, "no resident cells")
	}
	const fixed = "  PHASE       EPOCH  IDLE      INFLIGHT  SOCKETS  UNDURABLE    UPLOADED"
	nameW := len("CELL")
	for _, c := range cells {
		nameW = max(nameW, lipgloss.Width(c.Cell))
	}
	if width > 0 {
		nameW = max(12, min(nameW, width-lipgloss.Width(fixed)))
	}
	out = append(out, st.header.Render(fmt.Sprintf("%-*s%s", nameW, "CELL", fixed)))
	shown := cells
	if budget > 0 && len(shown) > budget {
		shown = shown[:max(0, budget-1)]
	}
	for _, c := range shown {
		// Replication: transactions not yet in the bucket, bytes of LTX
		// uploaded this epoch.
		lag, up := "-", "-"
		if rep := c.Replication; rep != nil {
			lag = fmt.Sprint(rep.CapturedTXID - min(rep.DurableTXID, rep.CapturedTXID))
			up = fmtBytes(uint64(rep.Bytes))
		}
		out = append(out, fmt.Sprintf("%-*s  %-10s  %5d  %-8s  %8d  %7d  %9s  %10s", nameW, truncate(c.Cell, nameW), c.Phase, c.Epoch, fmtMS(c.IdleMS), c.Inflight, c.WebSockets, lag, up))
	}
	if more := len(cells) - len(shown); more > 0 {
		out = append(out, st.faint.Render(fmt.Sprintf("… %d more", more)))
	}
	return out
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// truncate cuts s to w cells, marking the cut with an ellipsis.
func truncate(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && lipgloss.Width(string(r))+1 > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// fmtMS renders a duration in milliseconds compactly: 850ms, 8.1s, 3m20s,
// 2h05m.
func fmtMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func fmtBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, suffix := float64(b), []string{"KiB", "MiB", "GiB", "TiB"}
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, suffix[i])
}
