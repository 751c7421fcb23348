package server

import (
	"context"
	"log/slog"
)

// recordHandler is a slog handler that hands every record, with the
// attributes of the loggers it came through, to see.
func recordHandler(see func(slog.Record)) slog.Handler { return &recHandler{see: see} }

type recHandler struct {
	see   func(slog.Record)
	attrs []slog.Attr
}

func (h *recHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *recHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.see(r)
	return nil
}

func (h *recHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recHandler{see: h.see, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *recHandler) WithGroup(string) slog.Handler { return h }

// recordAttrs is a record's attributes by key (values resolved: int64,
// uint64, float64, string, bool, ...).
func recordAttrs(r slog.Record) map[string]any {
	out := map[string]any{}
	r.Attrs(func(a slog.Attr) bool {
		out[a.Key] = a.Value.Resolve().Any()
		return true
	})
	return out
}
