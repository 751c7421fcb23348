package kv

import "github.com/celldgo/celld/host"

// Kind registers KV namespaces as built-in cells: kv:<namespace id>
// (CellName), run by Handle.
var Kind = host.Kind{Name: "kv", Handler: Handle}
