package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The WebSocket protocol is github.com/gorilla/websocket's: frames,
// masking, fragmentation, control frames (pings answered on the reading
// goroutine, so a hibernated object is never woken for one), and
// permessage-deflate (without context takeover).

// writeTimeout bounds one frame's write to a stalled peer.
const writeTimeout = 30 * time.Second

// writePool shares write buffers between idle sockets: a socket holds one
// only while it writes.
var writePool = &sync.Pool{}

// gorillaTransport adapts a *websocket.Conn to a Transport.
type gorillaTransport struct {
	c *websocket.Conn
}

// NewTransport makes a Transport of a gorilla connection: Close frames
// are reported (never answered by the library: the script answers them,
// as on workerd) and messages above MaxMessageSize end the connection
// with 1009.
func NewTransport(c *websocket.Conn) Transport {
	c.SetReadLimit(MaxMessageSize)
	c.SetCloseHandler(func(int, string) error { return nil })
	return &gorillaTransport{c: c}
}

func (g *gorillaTransport) ReadMessage() (bool, []byte, error) {
	// NextReader fails between frames (the header of the next one);
	// reading the message fails inside one: a relay must tell the two
	// apart (a Close may follow only the first).
	mt, r, err := g.c.NextReader()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure {
			return false, nil, &CloseFrame{Code: ce.Code, Reason: ce.Text}
		}
		return false, nil, fmt.Errorf("read websocket: %w", err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		if errors.Is(err, websocket.ErrReadLimit) {
			return false, nil, fmt.Errorf("read websocket: message larger than %d bytes: %w", MaxMessageSize, err)
		}
		return false, nil, fmt.Errorf("read websocket: %w: %w", ErrMidFrame, err)
	}
	return mt == websocket.TextMessage, data, nil
}

func (g *gorillaTransport) WriteMessage(text bool, data []byte) error {
	mt := websocket.BinaryMessage
	if text {
		mt = websocket.TextMessage
	}
	g.c.SetWriteDeadline(time.Now().Add(writeTimeout))
	return g.c.WriteMessage(mt, data)
}

func (g *gorillaTransport) WriteClose(code int, reason string) error {
	if len(reason) > 123 {
		// A control frame carries 125 bytes: the reason is cut at a
		// character boundary.
		reason = strings.ToValidUTF8(reason[:123], "")
	}
	msg := websocket.FormatCloseMessage(code, reason)
	if code == websocket.CloseNoStatusReceived {
		msg = []byte{}
	}
	return g.c.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeTimeout))
}

func (g *gorillaTransport) Close() error { return g.c.Close() }

// Upgrader is how the node answers a WebSocket handshake: buffers small
// and shared, compression offered as workerd offers it.
var Upgrader = &websocket.Upgrader{
	ReadBufferSize:    1024,
	WriteBufferPool:   writePool,
	EnableCompression: true,
	CheckOrigin:       func(*http.Request) bool { return true }, // a Worker decides, as on workerd
	Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
		http.Error(w, reason.Error(), status)
	},
}

// dialer opens outbound sockets (new WebSocket(url), fetch with
// Upgrade: websocket).
var dialer = &websocket.Dialer{
	HandshakeTimeout:  30 * time.Second,
	ReadBufferSize:    1024,
	WriteBufferPool:   writePool,
	EnableCompression: true,
	Proxy:             http.ProxyFromEnvironment,
}

// dialWebSocket opens an outbound socket.
func dialWebSocket(ctx context.Context, url string, header http.Header) (Transport, *http.Response, error) {
	c, resp, err := dialer.DialContext(ctx, url, header)
	if err != nil {
		return nil, resp, err
	}
	return NewTransport(c), resp, nil
}
