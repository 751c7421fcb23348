package tui

import "slices"

// keyMap is every key binding, in one place. footerHelp and helpLines
// name them: change them together.
type keyMap struct {
	up, down, details, closeDetails, sort, sortBack, reverse, filter, help, quit []string
}

var keys = keyMap{
	up:           []string{"up", "k"},
	down:         []string{"down", "j"},
	details:      []string{"enter"},
	closeDetails: []string{"esc"},
	sort:         []string{"s", "right"},
	sortBack:     []string{"S", "left"},
	reverse:      []string{"r"},
	filter:       []string{"/"},
	help:         []string{"?"},
	quit:         []string{"q", "ctrl+c"},
}

func is(k string, binding []string) bool { return slices.Contains(binding, k) }

const footerHelp = "↑/↓ j/k select · enter details · s/S sort · r reverse · / filter · ? help · q quit"

// helpLines is the ? screen.
func helpLines() []string {
	return []string{
		"",
		"keys",
		"  ↑ ↓  j k     select a node",
		"  enter        open the selected node's detail pane (its cells: phase, epoch, idle, in flight, replication)",
		"  esc          close the detail pane; while filtering, clear the filter",
		"  s →  S ←     sort by the next / previous column (the sorted header is marked ▼)",
		"  r            reverse the sort",
		"  /            filter nodes and cells: type a part of a node name, address, health, deployment or",
		"               cell name; enter keeps the filter, esc clears it",
		"  ?            this help (any key closes it)",
		"  q  ctrl+c    quit",
		"",
		"columns",
		"  HEALTH       ok · draining · fenced (lost its lease, serves nothing) · unreachable (does not answer,",
		"               lease still valid) · dead (does not answer, lease expired: its cells move on their next",
		"               request) · gone (exited after a drain, lease deleted)",
		"  DEPLOY       the Worker version it serves (script@version); ! marks a newer one that failed to load",
		"  REQ/S ERR/S  public requests and 5xx answers per second between its last two answers",
		"  OCCUPIED ACTIVATE EVICT RESTORE RELEASE   cells by phase · WS its Durable Objects' WebSockets",
		"  LEASE        time left on its node lease",
	}
}
