package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
	"github.com/shoalpool/shoal/bench/internal/median"
)

// neverMarkdown writes the never-connected case: the refused port, then
// the logins the server refuses (loginErr says why they did not run, when
// they did not).
func neverMarkdown(b *strings.Builder, s neverSpec, refused []refusedRow, logins []loginRow, loginErr error) {
	b.WriteString("#### Never connected\n\n")
	fmt.Fprintf(b, "A port nothing listens on (127.0.0.1, a port just listened on and closed): %d tries of each client, each a fresh one.\n\n", s.tries)
	mdtable.Header(b, "client", "first error after (median)", "fastest / slowest", "dial attempts before it (median)", "tries that did not fail", "close stuck")
	for _, r := range refused {
		var took []time.Duration
		var dials []int
		succeeded, stuck := 0, 0
		for _, t := range r.tries {
			took = append(took, t.took)
			dials = append(dials, t.dials)
			if t.err == nil {
				succeeded++
			}
			if !t.closed {
				stuck++
			}
		}
		lo, hi := spread(took)
		fmt.Fprintf(b, "| %s | %s | %s / %s | %d | %d | %d |\n", r.client, dur(median.Of(took)), dur(lo), dur(hi), median.Of(dials), succeeded, stuck)
	}
	fmt.Fprintf(b, "\nFirst error after: from the client's creation to the end of its first request, which had a %v deadline; "+
		"the median of the tries, and the fastest and slowest. "+
		"shoal core: shoal.New with MaxConns %d and Dial a net.Dialer, then Acquire; "+
		"shoalhttp: shoalhttp.NewTransport with its zero Options but the dialer, then a GET; "+
		"net/http: a clone of http.DefaultTransport with the dialer, then a GET; "+
		"shoalpgx and pgxpool: pool_max_conns=%d, then Ping. "+
		"Dial attempts are counted in the dialer beneath each (pgconn's Config.DialFunc for the PostgreSQL pools, the transports' DialContext, the core's Dial). "+
		"Close stuck: tries whose client had not closed %v after.\n\n", s.deadline, refusedMaxConns, refusedMaxConns, closeWait)
	b.WriteString("The first try's error of each:\n\n")
	for _, r := range refused {
		if len(r.tries) > 0 {
			fmt.Fprintf(b, "- %s: `%s`\n", r.client, message(r.tries[0].err, 300))
		}
	}
	b.WriteString("\n")
	if loginErr != nil {
		fmt.Fprintf(b, "The server that refuses the login was not run: %s.\n\n", loginErr)
		return
	}
	fmt.Fprintf(b, "A server that answers and refuses the login (the shared PostgreSQL, role shoal), with pool_min_conns=1 and pool_max_conns=%d: one try of each.\n\n", refusedMaxConns)
	window := s.window.String()
	mdtable.Header(b, "server says", "pool", "first Ping's error after", "connect attempts before it",
		"connect attempts in the next "+window, "of them connected", "log lines before it", "log lines in the next "+window, "of them Debug", "password in the error or a log")
	for _, r := range logins {
		before, in, debug := "no logger", "no logger", "no logger"
		if r.logs != nil && r.logsBefore != nil {
			b, a := r.logsBefore, r.logs
			before = fmt.Sprint(b.info + b.debug)
			in = fmt.Sprint(a.info + a.debug - b.info - b.debug)
			debug = fmt.Sprint(a.debug - b.debug)
		}
		leaked := "no"
		if r.leaked {
			leaked = "**yes**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %s | %s | %s | %s |\n", r.fault, r.pool, dur(r.first.took), r.first.dials,
			r.after.started, r.after.connected, before, in, debug, leaked)
	}
	fmt.Fprintf(b, "\nFirst Ping's error after: from the pool's creation (its background dial for pool_min_conns starts there) to the end of its first Ping, which had a %v deadline. "+
		"Connect attempts: pgconn DialFunc calls (each a TCP connect, then the startup the server refuses), before the error and in the %s after it, the pool left to itself; "+
		"\"connected\" are the TCP connects that succeeded, each a login the server then refused. "+
		"Log lines: the records the pool's Config.Logger received, through a counting slog handler enabled at every level (Debug too; a service logging at Info would show the others), from the pool's creation to the first error and in the %s after it; "+
		"pgxpool takes no logger, so it has none to count (\"no logger\"): what it would say, it says to no one. "+
		"Password: the connection string's password (wrong or right), looked for in the Ping's error and in every log line with its attributes.\n\n", s.deadline, window, window)
	b.WriteString("The errors, and the first log lines of the pools that log:\n\n")
	for _, r := range logins {
		fmt.Fprintf(b, "- %s, %s: `%s`\n", r.fault, r.pool, message(r.first.err, 300, "not-the-password", password(s.dsn)))
		if r.logs != nil {
			for _, l := range r.logs.lines {
				fmt.Fprintf(b, "  - log: `%s`\n", message(errString(l), 300, "not-the-password", password(s.dsn)))
			}
		}
	}
	b.WriteString("\n")
}

// spread returns the smallest and largest of ds.
func spread(ds []time.Duration) (lo, hi time.Duration) {
	for i, d := range ds {
		if i == 0 || d < lo {
			lo = d
		}
		if i == 0 || d > hi {
			hi = d
		}
	}
	return lo, hi
}

// errString is a string as an error, for message.
type errString string

func (e errString) Error() string { return string(e) }
