package host

import (
	"fmt"
	"slices"
	"strings"

	"github.com/celldgo/celld/cell"
)

// A Kind is a built-in cell kind: the cells named "<Name>:<id>" (d1:,
// kv:, later queue:, cron:, workflow:), whose logic is a Go handler run
// one request at a time on the cell's owner — a node or a command under a
// tool lease. Each kind is one registration; the JavaScript binding that
// reaches it, if any, is registered beside it by the node (package
// server), since this package runs no JavaScript.
type Kind struct {
	Name    string       // the cell name's prefix: "d1", "kv"
	Handler cell.Handler // runs one encoded request
	// CheckID, when set, refuses ids the kind cannot hold, on top of
	// CheckID's rule for every built-in cell.
	CheckID func(id string) error
	// CheckRequest, when set, refuses an encoded request the handler
	// could not decode, before the cell is activated for it (a malformed
	// peer call must not wake a cell).
	CheckRequest func(req []byte) error
}

// Registry holds the built-in kinds a node or a command hosts.
type Registry struct {
	kinds map[string]Kind
}

// NewRegistry registers kinds. A kind without a name or handler, or a
// name registered twice, is a programming error and panics.
func NewRegistry(kinds ...Kind) *Registry {
	r := &Registry{kinds: map[string]Kind{}}
	for _, k := range kinds {
		if k.Name == "" || k.Handler == nil || strings.Contains(k.Name, ":") {
			panic(fmt.Sprintf("host: invalid built-in kind %+v", k))
		}
		if _, dup := r.kinds[k.Name]; dup {
			panic("host: built-in kind " + k.Name + " registered twice")
		}
		r.kinds[k.Name] = k
	}
	return r
}

// Kind returns the registered kind name.
func (r *Registry) Kind(name string) (Kind, bool) {
	if r == nil {
		return Kind{}, false
	}
	k, ok := r.kinds[name]
	return k, ok
}

// Names lists the registered kinds, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	names := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Split checks that cellName ("kind:id") names a cell of a registered
// kind with a valid id, and returns both.
func (r *Registry) Split(cellName string) (Kind, string, error) {
	name, id, ok := strings.Cut(cellName, ":")
	k, known := r.Kind(name)
	if !ok || !known {
		return Kind{}, "", fmt.Errorf("%q is not a built-in cell (kinds: %s)", cellName, strings.Join(r.Names(), ", "))
	}
	if err := CheckID(id); err != nil {
		return Kind{}, "", fmt.Errorf("built-in cell %q: %w", cellName, err)
	}
	if k.CheckID != nil {
		if err := k.CheckID(id); err != nil {
			return Kind{}, "", fmt.Errorf("built-in cell %q: %w", cellName, err)
		}
	}
	return k, id, nil
}

// CheckID is the rule every built-in cell id follows: it becomes a file
// name and part of bucket keys.
func CheckID(id string) error {
	bad := id == "" || len(id) > 200 || id == "." || id == ".."
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("the id must be 1-200 characters of A-Z a-z 0-9 . _ -")
	}
	return nil
}
