package kv

import (
	"encoding/json"
	"fmt"

	"github.com/celldgo/celld/host"
)

// Kind registers KV namespaces as built-in cells: kv:<namespace id>
// (CellName), run by Handle.
var Kind = host.Kind{Name: "kv", Handler: Handle, CheckRequest: checkRequest}

// checkRequest refuses what Handle could not decode.
func checkRequest(req []byte) error {
	var r request
	if err := json.Unmarshal(req, &r); err != nil {
		return fmt.Errorf("decode kv request: %w", err)
	}
	return nil
}
