package d1

import "github.com/celldgo/celld/host"

// Kind registers D1 databases as built-in cells: d1:<database_id or
// database_name> (CellName), run by Handle.
var Kind = host.Kind{Name: "d1", Handler: Handle, CheckRequest: checkRequest}

// checkRequest refuses what Handle could not decode.
func checkRequest(req []byte) error {
	_, _, err := decodeRequest(req)
	return err
}
