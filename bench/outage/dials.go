package main

import (
	"cmp"
	"context"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// dialFunc is the shape of a dial that pgconn (Config.DialFunc), net/http
// (Transport.DialContext) and shoalhttp (Options.DialContext) all take.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// attempt is one dial as the dialer saw it, timed from the log's zero.
type attempt struct {
	start, end time.Duration // end is 0 while the dial is under way
	ok         bool
}

// dialLog records every dial a pool makes through wrap: when it began and
// ended and whether it connected. It counts in the dialer itself, beneath
// the pool, so it sees the same thing for every pool, whatever the pool's
// own statistics call a dial. The connections it returns are the dialer's
// own, unwrapped: a pool that looks at its socket (shoalpgx does) sees the
// socket it would see without the log.
type dialLog struct {
	zero time.Time

	mu       sync.Mutex
	attempts []attempt
	// sessions are when PostgreSQL connections finished their startup
	// (pgconn's AfterConnect): a dial that connected is a session, a
	// cancel request (pgconn sends one on a connection of its own when a
	// query's context ends) or a login the server refused.
	sessions []time.Duration
}

// newDialLog starts a log whose times count from zero.
func newDialLog(zero time.Time) *dialLog { return &dialLog{zero: zero} }

// wrap returns dial, recording each call.
func (l *dialLog) wrap(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		l.mu.Lock()
		i := len(l.attempts)
		l.attempts = append(l.attempts, attempt{start: time.Since(l.zero)})
		l.mu.Unlock()
		c, err := dial(ctx, network, addr)
		end := max(time.Since(l.zero), time.Nanosecond) // never 0, which means under way
		l.mu.Lock()
		l.attempts[i].end, l.attempts[i].ok = end, err == nil
		l.mu.Unlock()
		return c, err
	}
}

// session records a PostgreSQL session's start; it is pgconn's
// Config.AfterConnect.
func (l *dialLog) session(context.Context, *pgconn.PgConn) error {
	l.mu.Lock()
	l.sessions = append(l.sessions, time.Since(l.zero))
	l.mu.Unlock()
	return nil
}

// sessionsIn counts the sessions started in [from, to).
func (l *dialLog) sessionsIn(from, to time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.sessions {
		if at >= from && at < to {
			n++
		}
	}
	return n
}

// pgOptions returns options that dial through the log and tell it of
// every session, with application_name app.
func (l *dialLog) pgOptions(app string) pgOptions {
	return pgOptions{dial: l.wrap(tcpDial), log: l, appName: app}
}

// tcpDial dials as a net.Dialer with a bound on the connect, the dial under
// every pool here.
func tcpDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return d.DialContext(ctx, network, addr)
}

// snapshot returns a copy of the attempts so far.
func (l *dialLog) snapshot() []attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.attempts)
}

// dialFigures are what a window of a dial log shows.
type dialFigures struct {
	started   int // dials begun in the window
	connected int // of those, the ones that connected
	// mostInFlight is the most dials under way at once at any moment of
	// the window, counting those begun before it and still under way.
	mostInFlight int
}

// window sums the attempts in [from, to).
func window(as []attempt, from, to time.Duration) dialFigures {
	var f dialFigures
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	inFlight := 0
	for _, a := range as {
		if a.start >= from && a.start < to {
			f.started++
			if a.ok {
				f.connected++
			}
		}
		switch {
		case a.start < from && (a.end == 0 || a.end > from):
			inFlight++ // already under way when the window opened
		case a.start >= from && a.start < to:
			edges = append(edges, edge{a.start, +1})
		default:
			continue
		}
		if a.end != 0 && a.end < to {
			edges = append(edges, edge{a.end, -1})
		}
	}
	// Ends before starts at the same instant: a dial that ended as another
	// began was not under way beside it.
	slices.SortFunc(edges, func(x, y edge) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.delta, y.delta))
	})
	f.mostInFlight = inFlight
	for _, e := range edges {
		inFlight += e.delta
		f.mostInFlight = max(f.mostInFlight, inFlight)
	}
	return f
}
