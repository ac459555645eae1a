package shoalhttp

import (
	"errors"
	"log/slog"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/failrun"
)

// refusal is what an origin remembers of its failed probes, as a core pool
// remembers its failed dials, on the same schedule (failrun): for a backoff
// after each failure, requests fail at once with its error rather than each
// dialling a server that is down, and the run of failures is logged as a
// pool logs its own. The error requests get is the run's last (Err).
// Guarded by origin.mu.
type refusal struct {
	run failrun.Run
}

// refuses returns the error a request gets at now (origin.now) without a
// probe, nil once the backoff has passed or when nothing failed.
func (r *refusal) refuses(now int64) error {
	if err := r.run.Err(); err != nil && now < r.run.Until() {
		return err
	}
	return nil
}

// noteProbe remembers a probe's outcome: failed says that err is the
// server's (a dial that failed, not the caller's context or a budget's
// refusal), which starts a backoff; success ends the run. started is when
// the probe's dial began (origin.now). o.mu must be held. It returns what
// to log, for the caller to log once o.mu is let go: a slow log handler
// must hold up only the request that logs, not every request to the
// origin.
func (o *origin) noteProbe(err error, failed bool, started int64) failrun.Line {
	r := &o.refused
	switch {
	case err == nil:
		return r.run.Succeed(o.now())
	case !failed:
		return failrun.Line{}
	}
	_, line := r.run.Fail(failrun.Failure{Err: err, Permanent: errors.Is(err, shoal.ErrPermanent), Started: started, At: o.now()}, true)
	if o.shutDown {
		return failrun.Line{}
	}
	return line
}

// now is the origin's clock for its refusal: monotonic, and never 0,
// which failrun reads as "never".
func (o *origin) now() int64 { return int64(time.Since(o.epoch)) + 1 }

// probeLogger is the logger of the origin's pool, which does not exist
// yet while its first connection is being made: the same attributes.
func (o *origin) probeLogger() *slog.Logger {
	return o.t.opts.Logger.With("origin", o.name, "pool", poolName(o.t.opts.Name, o.name))
}
