package tui

import "github.com/charmbracelet/lipgloss"

// styles are every style the view uses, in one place. Colours are ANSI
// numbers so they follow the terminal's palette; with the Ascii profile
// (tests, pipes) every style renders as plain text.
type styles struct {
	title    lipgloss.Style
	header   lipgloss.Style
	selected lipgloss.Style
	faint    lipgloss.Style
	warn     lipgloss.Style
	bar      lipgloss.Style
	barEmpty lipgloss.Style
	status   map[Status]lipgloss.Style
}

func newStyles() styles {
	return styles{
		title:    lipgloss.NewStyle().Bold(true),
		header:   lipgloss.NewStyle().Bold(true).Underline(true),
		selected: lipgloss.NewStyle().Reverse(true),
		faint:    lipgloss.NewStyle().Faint(true),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		bar:      lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		barEmpty: lipgloss.NewStyle().Faint(true),
		status: map[Status]lipgloss.Style{
			StatusOK:          lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
			StatusDraining:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true),
			StatusFenced:      lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
			StatusUnreachable: lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
			StatusGone:        lipgloss.NewStyle().Faint(true),
		},
	}
}
