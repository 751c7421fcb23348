package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// devLogHandler is celld dev's log: console.log/info/debug lines printed
// as they are on out, console.warn/error on errw, an uncaught exception as
// its message and stack on errw, and other records at warn or above in
// slog's text form.
type devLogHandler struct {
	mu    *sync.Mutex
	out   io.Writer
	errw  io.Writer
	text  slog.Handler
	attrs []slog.Attr
}

func newDevLogHandler(out, errw io.Writer) *devLogHandler {
	return &devLogHandler{mu: &sync.Mutex{}, out: out, errw: errw,
		text: slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn})}
}

func (h *devLogHandler) Enabled(_ context.Context, l slog.Level) bool { return true }

func (h *devLogHandler) Handle(ctx context.Context, r slog.Record) error {
	var source, errText, stack string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "source":
			source = a.Value.String()
		case "error":
			errText = a.Value.String()
		case "stack":
			stack = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case source == "console":
		w := h.out
		if r.Level >= slog.LevelWarn {
			w = h.errw
		}
		_, err := fmt.Fprintln(w, r.Message)
		return err
	case r.Level >= slog.LevelError && strings.HasPrefix(r.Message, "uncaught exception"):
		msg := errText
		if stack != "" && !strings.Contains(stack, errText) {
			msg += "\n" + stack
		} else if stack != "" {
			msg = stack
		}
		_, err := fmt.Fprintf(h.errw, "✘ [ERROR] %s: %s\n", r.Message, indent(msg))
		return err
	case r.Level >= slog.LevelWarn:
		return h.text.WithAttrs(h.attrs).Handle(ctx, r)
	}
	return nil
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") }

func (h *devLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *devLogHandler) WithGroup(string) slog.Handler { return h }
