package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/celldgo/celld/fleet"
)

// A PeerPoster sends one signed POST to a peer (the owner of a cell) and
// returns its status and body. The node's and a command's differ in how
// they sign and what a failed connection means; the call to a built-in
// cell on top of them is CallPeerCell.
type PeerPoster interface {
	PostPeer(ctx context.Context, path string, query url.Values, body []byte) (status int, data []byte, err error)
}

// PeerError is a peer's answer to a cell call that is neither the answer
// nor the handler's refusal (a *RequestError).
type PeerError struct {
	Node   string
	Status int
	Body   string
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("node %s answered %d: %s", e.Node, e.Status, e.Body)
}

// Retry reports a refusal that means "resolve the owner again": the cell
// moved (421) or the node is draining or activating it elsewhere (503).
func (e *PeerError) Retry() bool {
	return e.Status == http.StatusMisdirectedRequest || e.Status == http.StatusServiceUnavailable
}

// CallPeerCell runs req on built-in cell name at its owner node, reached
// through p: the one client for calls to a built-in cell on a peer.
func CallPeerCell(ctx context.Context, p PeerPoster, node, name string, req []byte) ([]byte, error) {
	status, data, err := p.PostPeer(ctx, fleet.PeerCellCallPath, url.Values{"cell": {name}}, req)
	if err != nil {
		return nil, err
	}
	switch status {
	case http.StatusOK:
		return data, nil
	case http.StatusUnprocessableEntity:
		var pe fleet.PeerCellError
		if json.Unmarshal(data, &pe) != nil || pe.Error == "" {
			pe = fleet.PeerCellError{Error: string(bytes.TrimSpace(data))}
		}
		return nil, &RequestError{Message: pe.Error, Code: pe.Code}
	default:
		return nil, &PeerError{Node: node, Status: status, Body: string(bytes.TrimSpace(data))}
	}
}

// PeerRefusal is the body of the 422 that reports err, a handler's
// refusal, to the calling peer.
func PeerRefusal(re *RequestError) fleet.PeerCellError {
	return fleet.PeerCellError{Error: re.Message, Code: re.Code}
}
