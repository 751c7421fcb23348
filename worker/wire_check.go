package worker

import (
	"fmt"
	"math/big"
)

// CheckWire reports whether data is a well-formed value in the wire
// format — the grammar, bounds, back references and depth the runtime's
// reader enforces — without building it. A node checks a forwarded RPC
// call's arguments with it before it activates the cell.
func CheckWire(data []byte) error {
	if _, err := readWire[struct{}](data, checkSink{}); err != nil {
		return fmt.Errorf("decode call arguments: %w", err)
	}
	return nil
}

// checkSink builds nothing.
type checkSink struct{}

var _ wireSink[struct{}] = checkSink{}

type none = struct{}

func (checkSink) undefined() none                              { return none{} }
func (checkSink) null() none                                   { return none{} }
func (checkSink) boolean(bool) none                            { return none{} }
func (checkSink) number(float64) none                          { return none{} }
func (checkSink) text(string) none                             { return none{} }
func (checkSink) bigint(*big.Int) none                         { return none{} }
func (checkSink) wrapper(none) none                            { return none{} }
func (checkSink) date(float64) none                            { return none{} }
func (checkSink) regexp(string, string) (none, error)          { return none{}, nil }
func (checkSink) buffer([]byte) none                           { return none{} }
func (checkSink) view(int, none, uint64, uint64) (none, error) { return none{}, nil }
func (checkSink) array(int) none                               { return none{} }
func (checkSink) arraySet(none, int, none) error               { return nil }
func (checkSink) object(int) none                              { return none{} }
func (checkSink) objectSet(none, string, none) error           { return nil }
func (checkSink) mapOf(int) none                               { return none{} }
func (checkSink) mapSet(none, none, none) error                { return nil }
func (checkSink) setOf(int) none                               { return none{} }
func (checkSink) setAdd(none, none) error                      { return nil }
func (checkSink) jsError(string, *string, *string) (none, error) {
	return none{}, nil
}
func (checkSink) errorCause(none, none) error               { return nil }
func (checkSink) domException(string, string) none          { return none{} }
func (checkSink) blob(string, []byte) none                  { return none{} }
func (checkSink) file(string, string, float64, []byte) none { return none{} }
