package shoalhttp

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/shoalpool/shoal"
)

// refusal is what an origin remembers of its failed probes, as a core pool
// remembers its failed dials: for a backoff after each failure, requests
// fail at once with its error rather than each dialling a server that is
// down, and the run of failures is logged as a pool logs its own. Guarded
// by origin.mu.
type refusal struct {
	err     error
	until   time.Time
	backoff time.Duration

	// The run of failures, for the log: when it began, how many there
	// were, and when it was last logged (zero: not logged).
	since    time.Time
	failures int64
	loggedAt time.Time
}

// The backoffs after a failed probe: the core pool's schedules, for a
// dial that failed and for a refusal no retry mends (shoal.ErrPermanent,
// such as a certificate the client rejects).
const (
	probeBackoffMin   = 10 * time.Millisecond
	probeBackoffMax   = 200 * time.Millisecond
	refusedBackoffMin = time.Second
	refusedBackoffMax = 10 * time.Second
	// probeStreakGap: a probe that fails this long after the last backoff
	// ended (nobody asked in between) starts a new run, as in the core.
	probeStreakGap = 2 * probeBackoffMax
	// probeLogEvery: a run of failures is logged when it starts and then
	// at most this often, as the core logs its dials.
	probeLogEvery = time.Minute
)

// noteProbe remembers a probe's outcome: failed says that err is the
// server's (a dial that failed, not the caller's context or a budget's
// refusal), which starts a backoff; success ends the run. o.mu must be
// held. It returns what to log, if anything, for the caller to log once
// o.mu is let go: a slow log handler must hold up only the request that
// logs, not every request to the origin.
func (o *origin) noteProbe(err error, failed bool) (logLine func()) {
	r := &o.refused
	now := time.Now()
	switch {
	case err == nil:
		if r.failures > 0 && !r.loggedAt.IsZero() {
			failures, after := r.failures, now.Sub(r.since).Round(time.Millisecond)
			logLine = func() {
				o.probeLogger().LogAttrs(context.Background(), slog.LevelInfo, "shoal: dial succeeded again",
					slog.Int64("failures", failures), slog.Duration("after", after))
			}
		}
		*r = refusal{}
		return logLine
	case !failed:
		return nil
	}
	if r.failures == 0 || now.Sub(r.until) > probeStreakGap {
		*r = refusal{since: now}
	}
	permanent := errors.Is(err, shoal.ErrPermanent)
	if permanent {
		r.backoff = min(max(2*r.backoff, refusedBackoffMin), refusedBackoffMax)
	} else {
		r.backoff = min(max(2*r.backoff, probeBackoffMin), probeBackoffMax)
	}
	r.err, r.until = err, now.Add(r.backoff)
	r.failures++
	if o.shutDown || (!r.loggedAt.IsZero() && now.Sub(r.loggedAt) < probeLogEvery) {
		return nil
	}
	msg := "shoal: dial failed"
	if !r.loggedAt.IsZero() {
		msg = "shoal: dials still failing"
	}
	r.loggedAt = now
	failures, over, retryIn := r.failures, now.Sub(r.since).Round(time.Millisecond), r.backoff
	return func() {
		o.probeLogger().LogAttrs(context.Background(), slog.LevelWarn, msg,
			slog.String("error", err.Error()), slog.Bool("permanent", permanent),
			slog.Int64("failures", failures), slog.Duration("for", over),
			slog.Duration("retry_in", retryIn))
	}
}

// probeLogger is the logger of the origin's pool, which does not exist
// yet while its first connection is being made: the same attributes.
func (o *origin) probeLogger() *slog.Logger {
	return o.t.opts.Logger.With("origin", o.name, "pool", poolName(o.t.opts.Name, o.name))
}

// startLine counts a line about to be logged outside o.mu. o.mu must be
// held.
func (o *origin) startLine() {
	if o.logging == 0 {
		o.loggedAll = make(chan struct{})
	}
	o.logging++
}

// endLine counts a line logged.
func (o *origin) endLine() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.logging--; o.logging == 0 {
		close(o.loggedAll)
	}
}

// waitLines waits for the lines being logged, or for ctx. On a shut-down
// origin no line starts after it looks: noteProbe logs nothing once
// shutDown is set.
func (o *origin) waitLines(ctx context.Context) error {
	o.mu.Lock()
	done := o.loggedAll
	if o.logging == 0 {
		done = nil
	}
	o.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
