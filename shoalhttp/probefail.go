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
// held.
func (o *origin) noteProbe(err error, failed bool) {
	r := &o.refused
	now := time.Now()
	switch {
	case err == nil:
		if r.failures > 0 && !r.loggedAt.IsZero() {
			o.probeLogger().LogAttrs(context.Background(), slog.LevelInfo, "shoal: dial succeeded again",
				slog.Int64("failures", r.failures), slog.Duration("after", now.Sub(r.since).Round(time.Millisecond)))
		}
		*r = refusal{}
		return
	case !failed:
		return
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
		return
	}
	msg := "shoal: dial failed"
	if !r.loggedAt.IsZero() {
		msg = "shoal: dials still failing"
	}
	r.loggedAt = now
	o.probeLogger().LogAttrs(context.Background(), slog.LevelWarn, msg,
		slog.String("error", err.Error()), slog.Bool("permanent", permanent),
		slog.Int64("failures", r.failures), slog.Duration("for", now.Sub(r.since).Round(time.Millisecond)),
		slog.Duration("retry_in", r.backoff))
}

// probeLogger is the logger of the origin's pool, which does not exist
// yet while its first connection is being made: the same attributes.
func (o *origin) probeLogger() *slog.Logger {
	return o.t.opts.Logger.With("origin", o.name, "pool", poolName(o.t.opts.Name, o.name))
}
