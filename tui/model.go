package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// ObservationMsg carries one poll's result into Update.
type ObservationMsg Observation

// TickMsg asks for the next poll.
type TickMsg struct{}

// Model is the root bubbletea model of celld top. Fetching happens only in
// the commands Init and Update return (poll), which hand the model a copy
// of what to poll and come back as an ObservationMsg; Update only stores,
// View only draws.
type Model struct {
	ctx      context.Context
	src      Source
	interval time.Duration

	snap    Snapshot
	polling bool    // a poll command is out; never more than one
	sortBy  SortKey // table order
	desc    bool    // the order reversed
	filter  string  // shows only the nodes and cells it matches ("" all)
	// filtering: keys edit the filter (after /, until enter or esc).
	filtering bool
	help      bool   // the ? screen is up
	selected  string // address of the selected row ("" before the first poll)
	detail    bool   // the detail pane is open
	width     int    // 0: unknown, lines are not cut
	height    int    // 0: unknown, the detail pane lists every cell
	st        styles
}

// New returns the model. ctx bounds every poll; interval is the pause
// between the end of one poll and the start of the next.
func New(ctx context.Context, src Source, interval time.Duration) Model {
	return Model{ctx: ctx, src: src, interval: interval, st: newStyles()}
}

// Snapshot returns the fleet as last merged.
func (m Model) Snapshot() Snapshot { return m.snap }

// Init starts the first poll.
func (m Model) Init() tea.Cmd {
	return poll(m.ctx, m.src, PollRequest{})
}

// poll is the only place a poll happens: in a command, on the
// bubbletea goroutine pool, with its inputs copied in.
func poll(ctx context.Context, src Source, req PollRequest) tea.Cmd {
	return func() tea.Msg { return ObservationMsg(src.Poll(ctx, req)) }
}

// Update stores results and answers keys.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case ObservationMsg:
		m.snap = Merge(m.snap, Observation(msg))
		m.polling = false
		m.keepSelection()
		return m, tea.Tick(m.interval, func(time.Time) tea.Msg { return TickMsg{} })
	case TickMsg:
		if m.polling {
			return m, nil
		}
		m.polling = true
		return m, poll(m.ctx, m.src, PollRequest{Tracked: m.snap.Tracked(), Detail: m.selected})
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

// key answers one key press.
func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if m.help {
		m.help = false
		if is(k, keys.quit) && k != "q" {
			return m, tea.Quit
		}
		return m, nil
	}
	if m.filtering {
		switch msg.Type {
		case tea.KeyEnter:
			m.filtering = false
		case tea.KeyEsc:
			m.filtering, m.filter = false, ""
		case tea.KeyBackspace:
			if r := []rune(m.filter); len(r) > 0 {
				m.filter = string(r[:len(r)-1])
			}
		case tea.KeyCtrlC:
			return m, tea.Quit
		case tea.KeyRunes, tea.KeySpace:
			m.filter += string(msg.Runes)
		}
		m.keepSelection()
		return m, nil
	}
	switch {
	case is(k, keys.quit):
		return m, tea.Quit
	case is(k, keys.up):
		m.move(-1)
	case is(k, keys.down):
		m.move(1)
	case is(k, keys.details):
		m.detail = !m.detail
	case is(k, keys.closeDetails):
		if m.filter != "" && !m.detail {
			m.filter = ""
		}
		m.detail = false
	case is(k, keys.sort):
		m.sortBy = (m.sortBy + 1) % sortKeys
	case is(k, keys.sortBack):
		m.sortBy = (m.sortBy + sortKeys - 1) % sortKeys
	case is(k, keys.reverse):
		m.desc = !m.desc
	case is(k, keys.filter):
		m.filtering = true
	case is(k, keys.help):
		m.help = true
	}
	m.keepSelection()
	return m, nil
}

// rows returns the nodes the filter shows, in the current order.
func (m Model) rows() []NodeRow {
	var rows []NodeRow
	for _, r := range m.snap.Nodes {
		if visible(r, m.filter) {
			rows = append(rows, r)
		}
	}
	sortRows(rows, m.sortBy, m.desc)
	return rows
}

// keepSelection selects the first row when nothing (or a vanished row)
// is selected. Selection follows the node, not the line, so a re-sort or
// a new node does not move it.
func (m *Model) keepSelection() {
	if r, ok := m.snap.Row(m.selected); ok && visible(r, m.filter) {
		return
	}
	m.selected = ""
	if rows := m.rows(); len(rows) > 0 {
		m.selected = rows[0].Addr
	}
}

func (m *Model) move(delta int) {
	rows := m.rows()
	if len(rows) == 0 {
		return
	}
	i := 0
	for j, r := range rows {
		if r.Addr == m.selected {
			i = j
		}
	}
	i = max(0, min(len(rows)-1, i+delta))
	m.selected = rows[i].Addr
}
