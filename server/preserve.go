package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/celldgo/celld/cell"
)

// Preserve mode (POST /shutdown?handoff=preserve): the node stops taking
// requests, lets those in flight finish, flushes every cell to the bucket
// and exits keeping ownership, its lease and the cells' SQLite files. It
// writes resume.json in the state directory; the same node restarting on
// the same state directory carries its session on and resumes each cell at
// the same epoch from the local file, without a restore. A cell whose
// record moved on meanwhile (another node judged the lease dead and took
// it) is not resumed, and its stale local file is removed.

const resumeFile = "resume.json"

// resumeState is resume.json.
type resumeState struct {
	Node      string       `json:"node"`
	Session   string       `json:"session"`
	Advertise string       `json:"advertise"`
	WrittenMS int64        `json:"written_ms"`
	Cells     []resumeCell `json:"cells"`
}

type resumeCell struct {
	Cell     string `json:"cell"`
	Class    string `json:"class"`
	ID       string `json:"id"`
	Epoch    uint64 `json:"epoch"`
	TXID     uint64 `json:"txid"`
	Checksum uint64 `json:"checksum"`
	Path     string `json:"path"`
}

// preserveAll stops every resident cell without releasing it and records
// where each stands. Call once requests have quiesced.
func (o *objects) preserveAll(node, session, advertise string) error {
	o.mu.Lock()
	var rs []*resident
	for _, r := range o.residents {
		rs = append(rs, o.detach(r))
	}
	o.mu.Unlock()
	st := resumeState{Node: node, Session: session, Advertise: advertise, WrittenMS: o.now().UnixMilli(), Cells: []resumeCell{}}
	var errs []error
	for _, r := range rs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := r.closeObject(ctx); err != nil {
			r.hc.Log().Warn("stop object", "err", err)
		}
		pos, ok, err := r.hc.Preserve(ctx)
		cancel()
		if ok {
			st.Cells = append(st.Cells, resumeCell{Cell: r.cell, Class: r.class, ID: r.id, Epoch: r.hc.Epoch(),
				TXID: pos.TXID, Checksum: pos.Checksum, Path: r.hc.Path()})
		} else {
			errs = append(errs, fmt.Errorf("%s not preserved (it restores from the bucket instead): durable %v, %v", r.cell, ok, err))
		}
		o.mu.Lock()
		if ch := o.stopping[r.cell]; ch != nil {
			close(ch)
			delete(o.stopping, r.cell)
		}
		o.mu.Unlock()
	}
	data, _ := json.MarshalIndent(st, "", "  ")
	tmp := filepath.Join(o.stateDir, resumeFile+".tmp")
	if err := os.MkdirAll(o.stateDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(o.stateDir, resumeFile)); err != nil {
		return err
	}
	o.log.Info("preserved cells for a restart", "cells", len(st.Cells), "file", filepath.Join(o.stateDir, resumeFile))
	return errors.Join(errs...)
}

// takeResume reads and consumes resume.json for node, if there is one.
func takeResume(stateDir, node string) (*resumeState, error) {
	path := filepath.Join(stateDir, resumeFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Consumed at once: two processes must never resume the same session.
	if err := os.Rename(path, path+".used"); err != nil {
		return nil, fmt.Errorf("consume %s: %w", path, err)
	}
	var st resumeState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.Node != node || st.Session == "" {
		return nil, nil // another node's state directory, or nothing to carry on
	}
	return &st, nil
}

// resume brings the preserved cells back at their epochs from their local
// files. A cell that cannot be resumed is dropped here (its file removed)
// and restores from the bucket when next addressed.
func (o *objects) resume(ctx context.Context, st *resumeState) {
	resumed := 0
	for _, rc := range st.Cells {
		if err := o.resumeOne(ctx, rc); err != nil {
			o.log.Warn("cell not resumed; it will restore from the bucket", "cell", rc.Cell, "epoch", rc.Epoch, "err", err)
			os.Remove(rc.Path)
			os.Remove(rc.Path + "-wal")
			os.Remove(rc.Path + "-shm")
			continue
		}
		resumed++
	}
	o.log.Info("resumed preserved cells", "resumed", resumed, "of", len(st.Cells))
}

func (o *objects) resumeOne(ctx context.Context, rc resumeCell) error {
	k, builtin := o.builtins.Kind(rc.Class)
	o.mu.Lock()
	ap := o.app
	o.mu.Unlock()
	if !builtin && ap == nil {
		return errors.New("no deployment to run the object on")
	}
	from := cell.RestoreInfo{Epoch: rc.Epoch, TXID: rc.TXID, Checksum: rc.Checksum}
	hc, err := o.host.Resume(ctx, rc.Cell, rc.Path, from)
	if err != nil {
		return err
	}
	r, err := o.start(ap, k.Handler, rc.Class, rc.ID, hc)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.residents[rc.Cell] = r
	o.mu.Unlock()
	go o.watch(r)
	r.alarmReady()
	return nil
}
