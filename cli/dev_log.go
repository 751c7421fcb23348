package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// devLogHandler is celld dev's log: the node's access log lines as
// "GET /path 200 1.2ms" and console.log/info/debug lines as they are on
// out, console.warn/error on errw, an uncaught exception as
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
	var access accessLine
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method", "path", "status", "duration_ms":
			access.set(a)
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
	case source == "access":
		_, err := fmt.Fprintf(h.out, "%s %s %d %s\n", access.method, access.path, access.status, access.took.Round(time.Millisecond/10))
		return err
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

// accessLine is the server's access log record ("source"="access"),
// printed by celld dev as "GET /path 200 1.2ms".
type accessLine struct {
	method, path string
	status       int64
	took         time.Duration
}

func (l *accessLine) set(a slog.Attr) {
	switch a.Key {
	case "method":
		l.method = a.Value.String()
	case "path":
		l.path = a.Value.String()
	case "status":
		l.status = a.Value.Int64()
	case "duration_ms":
		l.took = time.Duration(a.Value.Float64() * float64(time.Millisecond))
	}
}

func indent(s string) string { return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") }

func (h *devLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *devLogHandler) WithGroup(string) slog.Handler { return h }
