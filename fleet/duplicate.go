package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/celldgo/celld/fleet/core"
)

// ErrDuplicateNode is wrapped by the start error of a node whose name is
// held by another process that is running now.
var ErrDuplicateNode = fmt.Errorf("node name in use by a running process")

// probeTimeout bounds the look at a live lease holder's advertised address.
const probeTimeout = time.Second

// predecessorLive runs when the node's name is held by another session's
// unexpired lease. It says so once per holder, then asks the holder's
// advertised address for its state: a node answering with that session is
// a second process running under the same name (two nodes on one host
// that both defaulted to the host name, a copy-pasted config), and start
// fails at once naming both; no answer is a predecessor that died moments
// ago (restarted by its supervisor), and the node keeps waiting for its
// lease to lapse or disappear.
func (n *Node) predecessorLive(l core.Lease) {
	if n.waitingFor == l.Session {
		return
	}
	n.waitingFor = l.Session
	n.log.Warn("node name held by another session; checking whether it is still running",
		"node", n.cfg.Node, "holder_session", l.Session, "holder_advertise", l.Advertise,
		"expires", time.UnixMilli(l.Expires).UTC().Format(time.RFC3339Nano))
	go func() {
		if !probeSession(l.Advertise, l.Session) {
			n.log.Warn("the holder does not answer: waiting for its lease to lapse", "node", n.cfg.Node,
				"holder_session", l.Session, "holder_advertise", l.Advertise)
			return
		}
		n.readyOnce.Do(func() {
			n.startErr = fmt.Errorf("start node %s: %w: session %s answers at %s (this process is session %s); give each node its own --node",
				n.cfg.Node, ErrDuplicateNode, l.Session, l.Advertise, n.session)
			close(n.ready)
		})
	}()
}

// probeSession reports whether a celld node at advertise answers GET /state
// as session.
func probeSession(advertise, session string) bool {
	if advertise == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+advertise+"/state", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct {
		Session string `json:"session"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return false
	}
	return st.Session == session
}
