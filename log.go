package shoal

import (
	"context"
	"log/slog"
	"time"
)

// Logging goes through Config.Logger at Debug for each connection opened or
// closed, Warn for close failures and panicking hooks, Warn for a run of
// failed dials as it starts and once a minute while it lasts and Info as it
// ends (internal/failrun, in the words shoalhttp's origins use too), and
// Info/Warn for load shedding switching on and off. Nothing is logged per
// acquire, nor per failed dial, nor for a dial that failed once the pool was
// closed (Close cuts dials short), and once Close has returned nil the pool
// logs nothing more. The Logger always carries the pool's name ("pool"), New
// sees to that; a function here whose level the Logger drops returns at its
// first line.

func (p *Pool[T]) logEnabled(level slog.Level) bool {
	return p.cfg.Logger != nil && p.cfg.Logger.Enabled(context.Background(), level)
}

func (p *Pool[T]) logOpened(c *conn[T], took time.Duration) {
	if p.logEnabled(slog.LevelDebug) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelDebug, "shoal: connection opened",
			slog.Duration("dial_time", took), slog.Int("open", int(p.cap.open.Load())))
	}
}

func (p *Pool[T]) logClosed(c *conn[T], reason Reason) {
	if p.logEnabled(slog.LevelDebug) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelDebug, "shoal: connection closed",
			slog.String("reason", reason.String()),
			slog.Duration("age", time.Duration(p.now()-c.createdAt)))
	}
}

func (p *Pool[T]) logConnError(msg string, c *conn[T], err error) {
	if p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: "+msg,
			slog.String("error", err.Error()))
	}
}

// logShedding says that load shedding went on or off, with the shortest
// wait of the interval that decided it; a negative minWait says there was
// none to report (nobody acquired and nobody waited).
func (p *Pool[T]) logShedding(on bool, minWait time.Duration) {
	if minWait < 0 {
		if !on && p.logEnabled(slog.LevelInfo) {
			p.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "shoal: load shedding off")
		}
		return
	}
	if on && p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: load shedding on",
			slog.Duration("min_wait", minWait), slog.Duration("queue_target", p.cfg.QueueTarget))
	} else if !on && p.logEnabled(slog.LevelInfo) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "shoal: load shedding off",
			slog.Duration("min_wait", minWait))
	}
}
