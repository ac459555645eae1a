package failrun

import (
	"context"
	"log/slog"
	"time"
)

// lineKind says which of a run's lines a Line is.
type lineKind uint8

const (
	none lineKind = iota
	failing
	recovered
)

// Line is a line about a run, decided under the owner's lock and logged
// with Log once the lock is let go: a slow or blocking log handler must
// hold up only the caller that logs, not everyone who needs the lock. The
// zero Line logs nothing.
type Line struct {
	kind      lineKind
	err       error
	permanent bool
	failures  int64
	over      time.Duration
	retryIn   time.Duration
}

// Log writes the line to logger, if there is a line and logger wants it.
func (l Line) Log(logger *slog.Logger) {
	if l.kind == none || logger == nil {
		return
	}
	ctx := context.Background()
	switch l.kind {
	case failing:
		if !logger.Enabled(ctx, slog.LevelWarn) {
			return
		}
		msg := "shoal: dial failed"
		if l.failures > 1 {
			msg = "shoal: dials still failing"
		}
		logger.LogAttrs(ctx, slog.LevelWarn, msg,
			slog.String("error", l.err.Error()), slog.Bool("permanent", l.permanent),
			slog.Int64("failures", l.failures), slog.Duration("for", l.over.Round(time.Millisecond)),
			slog.Duration("retry_in", l.retryIn))
	case recovered:
		if logger.Enabled(ctx, slog.LevelInfo) {
			logger.LogAttrs(ctx, slog.LevelInfo, "shoal: dial succeeded again",
				slog.Int64("failures", l.failures), slog.Duration("after", l.over.Round(time.Millisecond)))
		}
	}
}

// Empty reports whether the line logs nothing, so that an owner can skip
// the work of finding its logger.
func (l Line) Empty() bool { return l.kind == none }
