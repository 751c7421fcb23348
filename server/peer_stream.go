package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/celldgo/celld/worker"
)

// A fetch forwarded to a Durable Object's owner is answered as a JSON
// head line (status, headers, whether the body streams) and then the body
// raw, so a streamed body passes through this node chunk by chunk.

// streamTransport is the peer transport for fetches: the answer's head
// must come within a minute, but its body may stream for as long as the
// object produces it (a client timeout would cut it off).
func streamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return t
}

// readFetchAnswer reads a peer's answer to a forwarded fetch: a JSON head
// line, then the body. A streamed body becomes the Response's Stream (it
// owns body then); any other is read whole and body closed.
func readFetchAnswer(body io.ReadCloser) (*worker.Response, error) {
	br := bufio.NewReader(body)
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("read answer head: %w", err)
	}
	var m peerMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, fmt.Errorf("decode answer head: %w", err)
	}
	resp := &worker.Response{Status: m.Status, StatusText: m.StatusText, Header: m.Header}
	if m.Streamed {
		resp.Stream = peerBody{Reader: br, Closer: body}
		return resp, nil
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(br, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read answer body: %w", err)
	}
	if len(data) > maxBody {
		return nil, errors.New("answer body larger than 100 MB")
	}
	resp.Body = data
	return resp, nil
}

// peerBody is a streamed answer body: read through the head's buffer,
// closed on the connection's body.
type peerBody struct {
	io.Reader
	io.Closer
}
