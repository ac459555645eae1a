package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
)

// logCount is a slog.Handler that counts what a pool logs, at every level,
// keeps the first few lines, and notes whether any line held one of the
// secrets it watches for (a password must never reach a log).
type logCount struct {
	shared *logShared
	text   slog.Handler // formats a record for the kept lines and the secret check
}

// keptLines is how many lines a logCount keeps for the report.
const keptLines = 3

type logShared struct {
	secrets []string

	mu     sync.Mutex
	buf    bytes.Buffer // the text handler's output, one record at a time
	info   int          // records at Info and above
	debug  int          // records below Info
	lines  []string
	leaked bool
}

// newLogCount returns a handler that counts every record, Debug included,
// and watches for secrets.
func newLogCount(secrets ...string) *logCount {
	sh := &logShared{secrets: secrets}
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{} // the kept lines are for reading the message, not when
		}
		return a
	}
	return &logCount{shared: sh, text: slog.NewTextHandler(&sh.buf, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime})}
}

// Enabled is true at every level: the report counts the Debug lines too.
func (h *logCount) Enabled(context.Context, slog.Level) bool { return true }

// Handle counts r and formats it to look for secrets.
func (h *logCount) Handle(ctx context.Context, r slog.Record) error {
	sh := h.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if r.Level >= slog.LevelInfo {
		sh.info++
	} else {
		sh.debug++
	}
	sh.buf.Reset()
	if err := h.text.Handle(ctx, r); err != nil {
		return err
	}
	line := strings.TrimSpace(sh.buf.String())
	for _, s := range sh.secrets {
		if s != "" && strings.Contains(line, s) {
			sh.leaked = true
			line = strings.ReplaceAll(line, s, "<password>")
		}
	}
	if len(sh.lines) < keptLines {
		sh.lines = append(sh.lines, line)
	}
	return nil
}

// WithAttrs returns a handler that adds attrs to every record, counting
// into the same totals.
func (h *logCount) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logCount{shared: h.shared, text: h.text.WithAttrs(attrs)}
}

// WithGroup returns a handler that puts later attributes in a group,
// counting into the same totals.
func (h *logCount) WithGroup(name string) slog.Handler {
	return &logCount{shared: h.shared, text: h.text.WithGroup(name)}
}

// logTally is a snapshot of a logCount.
type logTally struct {
	info, debug int
	lines       []string
	leaked      bool
}

func (h *logCount) tally() logTally {
	sh := h.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return logTally{info: sh.info, debug: sh.debug, lines: append([]string(nil), sh.lines...), leaked: sh.leaked}
}
