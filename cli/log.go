package cli

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
)

// logSettings are CELLD_LOG_FORMAT and CELLD_LOG_LEVEL, validated.
type logSettings struct {
	JSON  bool
	Level slog.Level
}

// readLogSettings reads the log variables; a bad value is a usage error
// naming the variable (checkEnv reports the same for serve).
func readLogSettings() (logSettings, error) {
	var s logSettings
	switch f := strings.TrimSpace(os.Getenv("CELLD_LOG_FORMAT")); f {
	case "", "text":
	case "json":
		s.JSON = true
	default:
		return s, usageErr("CELLD_LOG_FORMAT=%q: want one of text, json", f)
	}
	switch l := strings.TrimSpace(os.Getenv("CELLD_LOG_LEVEL")); l {
	case "", "info":
		s.Level = slog.LevelInfo
	case "debug":
		s.Level = slog.LevelDebug
	case "warn":
		s.Level = slog.LevelWarn
	case "error":
		s.Level = slog.LevelError
	default:
		return s, usageErr("CELLD_LOG_LEVEL=%q: want one of debug, info, warn, error", l)
	}
	return s, nil
}

// logger is a node's log on w in the chosen format.
func (s logSettings) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: s.Level}
	if s.JSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// reportJSON logs err (the command's outcome) on a JSON log, as its last
// line, and marks it reported so that main prints nothing more: in JSON
// mode every line on stderr is a JSON object.
func (s logSettings) reportJSON(log *slog.Logger, err error) error {
	if err == nil || !s.JSON {
		return err
	}
	attrs := []any{"exit_code", ExitCode(err)}
	if h := HintOf(err); h != "" {
		attrs = append(attrs, "hint", h)
	}
	log.Error(err.Error(), attrs...)
	return &reported{err}
}

// reported is an error already written to the log.
type reported struct{ error }

func (r *reported) Unwrap() error { return r.error }

// Reported tells main that err was written to the log already.
func Reported(err error) bool {
	var r *reported
	return errors.As(err, &r)
}
