package fleetlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
)

// maxAppendBody bounds one append request.
const maxAppendBody = 64 << 20

// Routes serves the follower side of d on mux. Seal and forget answer
// from the moment the listener does (a restarting node lets its
// predecessor's successors recover from its disk before its own start
// completes); hello, append and trim only once serving() is true. hello,
// when not nil, hears of every hello answered, with the (verified) node
// that sent it: that node is live.
func Routes(mux *http.ServeMux, d *Disk, v *fleet.Verifier, serving func() bool, hello func(from string)) {
	mux.HandleFunc("POST "+PathSeal, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := verified(w, r, v); !ok {
			return
		}
		q := r.URL.Query()
		// Check the disk before the answer starts: a refusal is a status.
		if q.Get("disk") != d.ID() {
			http.Error(w, "the member's disk was "+q.Get("disk")+", this node's is "+d.ID(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := d.Seal(q.Get("session"), q.Get("disk"), bw); err != nil {
			// Cut short without the end mark: the reader cannot take it
			// as a whole range.
			return
		}
		bw.Flush()
	})
	mux.HandleFunc("POST "+PathForget, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := verified(w, r, v); !ok {
			return
		}
		d.Forget(r.URL.Query().Get("session"))
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST "+PathHello, func(w http.ResponseWriter, r *http.Request) {
		if _, ok := verified(w, r, v); !ok || !up(w, serving) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"disk": d.ID()})
		if hello != nil {
			hello(r.Header.Get(fleet.HeaderPeerNode))
		}
	})
	mux.HandleFunc("POST "+PathAppend, func(w http.ResponseWriter, r *http.Request) {
		body, ok := verified(w, r, v)
		if !ok || !up(w, serving) {
			return
		}
		q := r.URL.Query()
		var segs []cell.Segment
		if err := readFrames(bytesReader(body), func(s cell.Segment) error { segs = append(segs, s); return nil }); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := d.Append(q.Get("session"), q.Get("disk"), segs); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, ErrRefused) {
				status = http.StatusConflict
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST "+PathTrim, func(w http.ResponseWriter, r *http.Request) {
		body, ok := verified(w, r, v)
		if !ok || !up(w, serving) {
			return
		}
		// One trim, or a list of them (a log pack's cells).
		var ts []trim
		if len(body) > 0 && body[0] == '[' {
			if err := json.Unmarshal(body, &ts); err != nil {
				http.Error(w, "bad trim: "+err.Error(), http.StatusBadRequest)
				return
			}
		} else {
			var t trim
			if err := json.Unmarshal(body, &t); err != nil {
				http.Error(w, "bad trim: "+err.Error(), http.StatusBadRequest)
				return
			}
			ts = append(ts, t)
		}
		for _, t := range ts {
			d.Trim(r.URL.Query().Get("session"), t.Cell, t.Epoch, t.Through)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func up(w http.ResponseWriter, serving func() bool) bool {
	if !serving() {
		http.Error(w, "node is not serving", http.StatusServiceUnavailable)
		return false
	}
	return true
}

func verified(w http.ResponseWriter, r *http.Request, v *fleet.Verifier) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAppendBody+1))
	if err != nil || len(body) > maxAppendBody {
		http.Error(w, "peer request body unreadable or too large", http.StatusRequestEntityTooLarge)
		return nil, false
	}
	if err := v.Verify(r, body); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}
