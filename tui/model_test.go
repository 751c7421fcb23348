package tui

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/celldgo/celld/server/api"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMain(m *testing.M) {
	// Goldens hold plain text: no colour, no attributes.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// t0 is the poll clock of the fixtures: 2026-01-02 03:04:05 UTC.
const t0 = int64(1767323045000)

func state(node, addr string, occupied int, cells ...api.Cell) *api.State {
	return &api.State{
		Node: node, Session: node + "-s1", Version: "v1.2.3", Advertise: addr, Health: "ok",
		Counters: api.Counters{Occupied: occupied, AlarmsArmed: occupied / 2, AlarmsDue: occupied / 4, WebSockets: 7 * occupied}, Cells: cells,
		RSSBytes: uint64(40+occupied) << 20, HeapBytes: 12 << 20, UptimeMS: 200_000,
		LeaseExpiresMS: t0 + 8_100, NowMS: t0,
	}
}

func counterCell(i int, phase string, epoch uint64) api.Cell {
	c := api.Cell{Cell: "Counter:" + strings.Repeat(string(rune('a'+i)), 64), Phase: phase, Epoch: epoch, IdleMS: int64(i) * 1_500, Inflight: i % 2, WebSockets: 3 * i}
	if phase == "owned" {
		txid := uint64(100 * (i + 1))
		c.Replication = &api.Replication{CapturedTXID: txid + uint64(i%3), DurableTXID: txid, Segments: 40 * i, Merges: 10 * i, Snapshots: 2, Bytes: int64(i+1) * 300_000}
	}
	return c
}

func draining(s *api.State, cells, released int) *api.State {
	s.Health, s.Draining, s.Mode = "draining", true, "handoff"
	s.DrainStartMS, s.DrainCells, s.DrainReleased, s.DrainDeadlineMS = s.NowMS-2_000, cells, released, s.NowMS+23_000
	s.Counters.Occupied = cells - released
	s.Counters.Releasing = min(2, cells-released)
	return s
}

func leased(node, addr string, at int64, st *api.State) NodeObservation {
	return NodeObservation{Addr: addr, Node: node, Lease: &LeaseSeen{Session: node + "-s1", ExpiresMS: at + 9_000}, State: st}
}

func refused(addr string) string {
	return "get state: Get \"http://" + addr + "/state\": dial tcp " + addr + ": connect: connection refused"
}

// normalFleet is three healthy nodes.
func normalFleet(at int64) Observation {
	a := state("node-a", "127.0.0.1:7101", 3, counterCell(0, "owned", 4), counterCell(1, "owned", 2), counterCell(2, "activating", 0))
	a.Counters.Activating = 1
	b := state("node-b", "127.0.0.1:7102", 5, counterCell(3, "owned", 7), counterCell(4, "restoring", 0))
	b.Counters.Restoring = 1
	c := state("node-c", "127.0.0.1:7103", 0)
	for _, s := range []*api.State{a, b, c} {
		s.NowMS, s.LeaseExpiresMS = at, at+8_100
	}
	return Observation{AtMS: at, Listed: true, Nodes: []NodeObservation{
		leased("node-a", "127.0.0.1:7101", at, a), leased("node-b", "127.0.0.1:7102", at, b), leased("node-c", "127.0.0.1:7103", at, c),
	}}
}

// feed runs msgs through Update in order and returns the model.
func feed(t testing.TB, m Model, msgs ...tea.Msg) Model {
	t.Helper()
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
	}
	return m
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./tui/ -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("View() differs from %s (go test ./tui/ -update rewrites it)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func newTestModel() Model {
	return New(context.Background(), &fakeSource{}, time.Second)
}

var size = tea.WindowSizeMsg{Width: 140, Height: 40}

func key(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func TestModel_View(t *testing.T) {
	bDraining := func(at int64, released int) Observation {
		o := normalFleet(at)
		draining(o.Nodes[1].State, 8, released)
		return o
	}
	// bGone: node-b finished its drain, deleted its lease and exited.
	bGone := func(at int64) Observation {
		o := normalFleet(at)
		o.Nodes[1] = NodeObservation{Addr: "127.0.0.1:7102", Err: refused("127.0.0.1:7102")}
		return o
	}
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"polling", []tea.Msg{size}},
		{"normal", []tea.Msg{size, ObservationMsg(normalFleet(t0))}},
		{"normal_details", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("j"), key("enter")}},
		{"sorted_by_occupied", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("s"), key("s"), key("s"), key("s"), key("s"), key("s")}},
		// Rates: node-a answered 50 more requests (5 of them 5xx) over 2s,
		// node-b restarted between the polls (a new session: no rate).
		{"rates", []tea.Msg{size, ObservationMsg(withTraffic(normalFleet(t0), 1000, 10)), ObservationMsg(func() Observation {
			o := withTraffic(normalFleet(t0+2000), 1050, 15)
			o.Nodes[1].State.Session = "node-b-s2"
			o.Nodes[2].State.Requests, o.Nodes[2].State.Errors = 1000+4000, 10
			return o
		}()), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S")}},
		// Dead: node-c stopped answering and its lease ran out; node-d's
		// lease had expired before top started.
		{"dead_nodes", []tea.Msg{size, ObservationMsg(normalFleet(t0)), ObservationMsg(func() Observation {
			o := normalFleet(t0 + 12_000)
			o.Nodes[2] = NodeObservation{Addr: "127.0.0.1:7103", Node: "node-c", Lease: &LeaseSeen{Session: "node-c-s1", ExpiresMS: t0 + 8_100}, Err: refused("127.0.0.1:7103")}
			o.Nodes = append(o.Nodes, NodeObservation{Addr: "127.0.0.1:7104", Node: "node-d", Lease: &LeaseSeen{Session: "node-d-s1", ExpiresMS: t0 - 3_600_000}, Err: "lease expired: not asked"})
			return o
		}()), key("s"), key("s")}},
		// Filter by a cell name: only node-b holds a cell with "eee"; its
		// detail pane lists only that cell.
		{"filter_cells", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("/"), key("e"), key("e"), key("e"), key("enter"), key("enter")}},
		{"filter_typing", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("/"), key("n"), key("o"), key("d"), key("e"), key("-"), key("c")}},
		{"filter_none", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("/"), key("z"), key("z"), key("enter")}},
		{"help", []tea.Msg{size, ObservationMsg(normalFleet(t0)), key("?")}},
		{"draining", []tea.Msg{size, ObservationMsg(normalFleet(t0)), ObservationMsg(bDraining(t0+1000, 5)), key("down"), key("enter")}},
		{"node_gone", []tea.Msg{size, ObservationMsg(normalFleet(t0)), ObservationMsg(bDraining(t0+1000, 6)), ObservationMsg(bGone(t0 + 2000))}},
		{"errors", []tea.Msg{size, ObservationMsg(normalFleet(t0)), ObservationMsg(func() Observation {
			o := normalFleet(t0 + 3000)
			o.Listed, o.ListErr = false, errors.New("list node leases: list nodes/: bucket unavailable: dial tcp 127.0.0.1:9000: connection refused")
			for i := range o.Nodes {
				o.Nodes[i].Lease = nil
			}
			o.Nodes[0].State.Health = "fenced"
			o.Nodes[2] = NodeObservation{Addr: "127.0.0.1:7103", Err: "get state: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}
			return o
		}()), key("j"), key("j"), key("enter")}},
		{"one_node_never_answered", []tea.Msg{size, ObservationMsg(Observation{AtMS: t0, Static: true,
			Nodes: []NodeObservation{{Addr: "127.0.0.1:7109", Err: refused("127.0.0.1:7109")}}}), key("enter")}},
		{"narrow", []tea.Msg{tea.WindowSizeMsg{Width: 60, Height: 20}, ObservationMsg(bDraining(t0, 3)), key("enter")}},
		{"load_failed_details", []tea.Msg{size, ObservationMsg(func() Observation {
			o := normalFleet(t0)
			for i := range o.Nodes {
				o.Nodes[i].State.Deployment = "shop@4f1c2a9e0b7d3e11"
			}
			b := o.Nodes[1].State
			b.LoadFailed, b.LoadError = "9a8b7c6d5e4f3a21", "start shop version 9a8b7c6d5e4f3a21: evaluate script shop/index.js: ReferenceError: cfg is not defined"
			return o
		}()), key("j"), key("enter")}},
		// Fleet durability: node-b owns with two followers and recovers a
		// dead session; node-a's group lost its members; node-c runs in
		// bucket mode (a mixed fleet, flagged in the summary).
		{"fleet_details", []tea.Msg{size, ObservationMsg(func() Observation {
			o := normalFleet(t0)
			o.Nodes[0].State.Durability = api.Durability{Mode: "fleet", Disk: "d-a", Followers: []api.Follower{}, LogRecord: "open", FleetAcked: 10, BucketProofs: 4}
			o.Nodes[1].State.Durability = api.Durability{Mode: "fleet", Disk: "d-b", Followers: []api.Follower{{Node: "node-a", Disk: "d-a"}, {Node: "node-c", Disk: "d-c"}},
				LogRecord: "open", RetainedBytes: 3 << 10, FollowerRetainedBytes: 12 << 10, FollowerSessions: 2, FleetAcked: 900, BucketProofs: 6, AppendsHedged: 3,
				Packs: 41, PackBytes: 2 << 20, LivePacks: 7, PackFloor: 35, RecoveryInProgress: 1, Recovered: 2}
			o.Nodes[2].State.Durability = api.Durability{Mode: "bucket"}
			return o
		}()), key("j"), key("enter")}},
		{"fleet_fenced_details", []tea.Msg{size, ObservationMsg(func() Observation {
			o := normalFleet(t0)
			for i := range o.Nodes {
				o.Nodes[i].State.Durability = api.Durability{Mode: "fleet", Followers: []api.Follower{{Node: "node-b"}}, Joining: "node-c", LogRecord: "sealed", LogFenced: true}
			}
			return o
		}()), key("enter")}},
		{"short_details", []tea.Msg{tea.WindowSizeMsg{Width: 140, Height: 16}, ObservationMsg(func() Observation {
			o := normalFleet(t0)
			for i := range 12 {
				o.Nodes[0].State.Cells = append(o.Nodes[0].State.Cells, counterCell(i, "owned", uint64(i)))
			}
			return o
		}()), key("enter")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := feed(t, newTestModel(), tc.msgs...)
			golden(t, tc.name, m.View())
		})
	}
}

// withTraffic sets every node's request counters.
func withTraffic(o Observation, requests, errors uint64) Observation {
	for i := range o.Nodes {
		o.Nodes[i].State.Requests, o.Nodes[i].State.Errors = requests, errors
		o.Nodes[i].State.Deployment = "shop@4f1c2a9e0b7d3e11"
	}
	return o
}

func TestMerge_RatesAndDead(t *testing.T) {
	s := Merge(Snapshot{}, withTraffic(normalFleet(t0), 1000, 10))
	s = Merge(s, withTraffic(normalFleet(t0+2000), 1050, 15))
	a, _ := s.Row("127.0.0.1:7101")
	if !a.HasRate || a.ReqPerSec != 25 || a.ErrPerSec != 2.5 {
		t.Errorf("node-a: rate %v %v/s, %v/s; want 25/s and 2.5/s", a.HasRate, a.ReqPerSec, a.ErrPerSec)
	}
	if s.Totals.ReqPerSec != 75 || s.Totals.ErrPerSec != 7.5 {
		t.Errorf("totals %v/s, %v/s; want 75 and 7.5", s.Totals.ReqPerSec, s.Totals.ErrPerSec)
	}
	// node-c stops answering; its lease runs out: dead, kept, not polled.
	o := normalFleet(t0 + 12_000)
	o.Nodes[2] = NodeObservation{Addr: "127.0.0.1:7103", Node: "node-c", Lease: &LeaseSeen{ExpiresMS: t0 + 8_100}, Err: refused("127.0.0.1:7103")}
	s = Merge(s, o)
	c, ok := s.Row("127.0.0.1:7103")
	if !ok || c.Status != StatusDead || c.HasRate || s.Totals.Dead != 1 {
		t.Fatalf("node-c with an expired lease: %+v (dead total %d)", c, s.Totals.Dead)
	}
	if strings.Contains(strings.Join(s.Tracked(), ","), "7103") {
		t.Errorf("a dead node is still polled: %v", s.Tracked())
	}
	// A fresh lease on its address brings it back.
	s = Merge(s, normalFleet(t0+13_000))
	if c, _ := s.Row("127.0.0.1:7103"); c.Status != StatusOK {
		t.Errorf("node-c back with a fresh lease: %s", c.Status)
	}
}

func TestModel_Filter(t *testing.T) {
	m := feed(t, newTestModel(), size, ObservationMsg(normalFleet(t0)), key("/"), key("n"), key("o"), key("d"), key("e"), key("-"), key("b"))
	if !m.filtering || m.filter != "node-b" {
		t.Fatalf("typing after /: filtering %v, filter %q", m.filtering, m.filter)
	}
	if rows := m.rows(); len(rows) != 1 || rows[0].Node != "node-b" || m.selected != "127.0.0.1:7102" {
		t.Errorf("filter node-b shows %v, selected %s", rows, m.selected)
	}
	m = feed(t, m, key("q")) // a letter while filtering is text, not quit
	if m.filter != "node-bq" {
		t.Errorf("q while filtering: filter %q", m.filter)
	}
	m = feed(t, m, tea.KeyMsg{Type: tea.KeyBackspace}, key("enter"))
	if m.filtering || m.filter != "node-b" {
		t.Errorf("after backspace and enter: filtering %v, filter %q", m.filtering, m.filter)
	}
	m = feed(t, m, key("/"), key("esc"))
	if m.filter != "" || len(m.rows()) != 3 {
		t.Errorf("esc while filtering leaves filter %q, %d rows", m.filter, len(m.rows()))
	}
	m = feed(t, m, key("?"))
	if !m.help {
		t.Fatal("? did not open the help")
	}
	if m = feed(t, m, key("j")); m.help {
		t.Error("a key did not close the help")
	}
}

func TestModel_ViewFitsWidth(t *testing.T) {
	m := feed(t, newTestModel(), tea.WindowSizeMsg{Width: 50, Height: 30}, ObservationMsg(normalFleet(t0)), key("enter"))
	for i, l := range strings.Split(m.View(), "\n") {
		if w := lipgloss.Width(l); w > 50 {
			t.Errorf("line %d is %d cells wide, window is 50: %q", i, w, l)
		}
	}
}

func TestModel_Keys(t *testing.T) {
	m := feed(t, newTestModel(), size, ObservationMsg(normalFleet(t0)))
	if got, want := m.selected, "127.0.0.1:7101"; got != want {
		t.Fatalf("after the first poll, selected = %q, want %q", got, want)
	}
	m = feed(t, m, key("j"), key("down"), key("j")) // past the end stays on the last
	if got, want := m.selected, "127.0.0.1:7103"; got != want {
		t.Errorf("after three downs, selected = %q, want %q", got, want)
	}
	m = feed(t, m, key("k"), key("up"), key("up"))
	if got, want := m.selected, "127.0.0.1:7101"; got != want {
		t.Errorf("after three ups, selected = %q, want %q", got, want)
	}
	// Selection follows the node across a re-sort: node-b has the most
	// cells, so sorting by occupied moves it to the top, still selected.
	m = feed(t, m, key("j"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"), key("S"))
	if got, want := m.sortBy, SortOccupied; got != want {
		t.Fatalf("after S ×8, sort = %v, want %v", got, want)
	}
	if got, want := m.selected, "127.0.0.1:7102"; got != want {
		t.Errorf("after the re-sort, selected = %q, want %q", got, want)
	}
	if rows := m.rows(); rows[0].Addr != "127.0.0.1:7102" {
		t.Errorf("sorted by occupied, first row = %s, want node-b", rows[0].Node)
	}
	m = feed(t, m, key("enter"))
	if !m.detail {
		t.Error("enter did not open the detail pane")
	}
	m = feed(t, m, key("esc"))
	if m.detail {
		t.Error("esc did not close the detail pane")
	}
	_, cmd := m.Update(key("q"))
	if cmd == nil {
		t.Fatal("q returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q did not quit")
	}
}

// fakeSource records what it was asked and answers from a script.
type fakeSource struct {
	mu      sync.Mutex
	answers []Observation
	asked   [][]string
	details []string // the Detail of each poll
}

func (f *fakeSource) Poll(_ context.Context, req PollRequest) Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, append([]string(nil), req.Tracked...))
	f.details = append(f.details, req.Detail)
	if len(f.answers) == 0 {
		return Observation{}
	}
	o := f.answers[0]
	f.answers = f.answers[1:]
	return o
}

func TestModel_PollsThroughCommands(t *testing.T) {
	gone := normalFleet(t0 + 1000)
	gone.Nodes[2] = NodeObservation{Addr: "127.0.0.1:7103", Err: refused("127.0.0.1:7103")}
	src := &fakeSource{answers: []Observation{normalFleet(t0), gone, normalFleet(t0 + 2000)}}
	m := New(context.Background(), src, time.Second)

	msg := m.Init()()
	obs, ok := msg.(ObservationMsg)
	if !ok {
		t.Fatalf("Init's command returned %T, want ObservationMsg", msg)
	}
	next, cmd := m.Update(obs)
	m = next.(Model)
	if cmd == nil {
		t.Fatal("an observation scheduled no next poll")
	}
	// The tick (its delay is bubbletea's business) starts one poll; a
	// second tick while it is out starts none.
	next, cmd = m.Update(TickMsg{})
	m = next.(Model)
	if cmd == nil {
		t.Fatal("a tick started no poll")
	}
	if _, again := m.Update(TickMsg{}); again != nil {
		t.Error("a tick while a poll is out started another")
	}
	m = feed(t, m, cmd())
	if got := m.Snapshot().Nodes[2].Status; got != StatusGone {
		t.Fatalf("node-c without lease and answer: status %s, want gone", got)
	}
	_, cmd = m.Update(TickMsg{})
	cmd()
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.asked) != 3 {
		t.Fatalf("source polled %d times, want 3", len(src.asked))
	}
	if len(src.asked[0]) != 0 {
		t.Errorf("first poll tracked %v, want nothing", src.asked[0])
	}
	if got, want := strings.Join(src.asked[2], ","), "127.0.0.1:7101,127.0.0.1:7102"; got != want {
		t.Errorf("poll after node-c went: tracked %s, want %s (a gone node is not polled)", got, want)
	}
	if src.details[0] != "" || src.details[1] != "127.0.0.1:7101" {
		t.Errorf("polls asked for the detail of %q, want nothing, then the selected node", src.details)
	}
}

func TestRenderText(t *testing.T) {
	o := normalFleet(t0)
	draining(o.Nodes[1].State, 8, 2)
	o.Nodes[2] = NodeObservation{Addr: "127.0.0.1:7103", Node: "node-c", Lease: &LeaseSeen{ExpiresMS: t0 - 500}, Err: refused("127.0.0.1:7103")}
	golden(t, "once", RenderText(Merge(Snapshot{}, o)))
}
