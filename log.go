package shoal

import (
	"context"
	"log/slog"
	"time"
)

// Logging goes through Config.Logger at Debug for each connection opened or
// closed, Warn for dial failures, close failures and panicking hooks, and
// Info/Warn for load shedding switching on and off. Nothing is logged per
// acquire. With no Logger every function here returns at its first line.

func (p *Pool[T]) logEnabled(level slog.Level) bool {
	return p.cfg.Logger != nil && p.cfg.Logger.Enabled(context.Background(), level)
}

func (p *Pool[T]) logOpened(c *conn[T], took time.Duration) {
	if p.logEnabled(slog.LevelDebug) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelDebug, "shoal: connection opened",
			slog.Duration("dial_time", took), slog.Int("open", int(p.open.Load())))
	}
}

func (p *Pool[T]) logClosed(c *conn[T], reason Reason) {
	if p.logEnabled(slog.LevelDebug) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelDebug, "shoal: connection closed",
			slog.String("reason", reason.String()),
			slog.Duration("age", time.Duration(p.now()-c.createdAt)))
	}
}

func (p *Pool[T]) logDialFailed(err error, backoff time.Duration) {
	if p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: dial failed",
			slog.String("error", err.Error()), slog.Duration("backoff", backoff))
	}
}

func (p *Pool[T]) logConnError(msg string, c *conn[T], err error) {
	if p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: "+msg,
			slog.String("error", err.Error()))
	}
}

func (p *Pool[T]) logShedding(on bool, minWait time.Duration) {
	if on && p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: load shedding on",
			slog.Duration("min_wait", minWait), slog.Duration("queue_target", p.cfg.QueueTarget))
	} else if !on && p.logEnabled(slog.LevelInfo) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "shoal: load shedding off",
			slog.Duration("min_wait", minWait))
	}
}
