package tui

import "slices"

// keyMap is every key binding, in one place. footerHelp names them for
// the footer: change the two together.
type keyMap struct {
	up, down, details, closeDetails, sort, quit []string
}

var keys = keyMap{
	up:           []string{"up", "k"},
	down:         []string{"down", "j"},
	details:      []string{"enter"},
	closeDetails: []string{"esc"},
	sort:         []string{"s"},
	quit:         []string{"q", "ctrl+c"},
}

func is(k string, binding []string) bool { return slices.Contains(binding, k) }

const footerHelp = "↑/↓ j/k select · enter details · s sort · q quit"
