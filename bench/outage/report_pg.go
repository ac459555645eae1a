package main

import (
	"fmt"
	"strings"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// Targets of the callers-that-give-up case, for shoalpgx.
const (
	giveUpConnShare = 0.02 // new connections, at most this share of the abandoned queries
	giveUpVsPgxpool = 1.5  // queries served, at least this many times pgxpool's
)

// giveUpMarkdown writes the callers-that-give-up case.
func giveUpMarkdown(b *strings.Builder, s giveUpSpec, runs []giveUpRun) {
	b.WriteString("#### Callers that give up\n\n")
	fmt.Fprintf(b, "%d callers on a pool of %d connections for %v; every %dth query of each is `%s` with a %v deadline, the others `%s` without one.\n\n",
		s.callers, s.maxConns, s.duration, s.every, giveUpSQL, s.deadline, servedSQL)
	mdtable.Header(b, "pool", "queries served", "per second", "queries abandoned", "finished within the deadline", "other errors", "new connections", "new connections per abandoned query", "cancel requests")
	for _, r := range runs {
		fmt.Fprintf(b, "| %s | %d | %.0f | %d | %d | %d | %d | %s | %d |\n", r.pool, r.served, float64(r.served)/r.elapsed.Seconds(),
			r.abandoned, r.completed, r.otherErrs, r.sessions, ratio(r.sessions, r.abandoned), r.otherDials)
	}
	fmt.Fprintf(b, "\nQueries served: those that succeeded, of either kind; abandoned: the short-deadline ones that failed (their deadline covers the wait for a connection too, "+
		"so some end before they reach the server); finished within the deadline: short-deadline ones that succeeded all the same. "+
		"New connections: PostgreSQL sessions opened during the run, after each pool was warmed with its %d connections, %s "+
		"The shared server (127.0.0.1:5432), each pool on its own, shoalpgx first.\n\n", s.maxConns, countedHow)
	sh, px := findGiveUp(runs, "shoalpgx"), findGiveUp(runs, "pgxpool")
	if sh != nil {
		mdtable.Header(b, "target (shoalpgx)", "figure", "verdict")
		share := 0.0
		if sh.abandoned > 0 {
			share = float64(sh.sessions) / float64(sh.abandoned)
		}
		fmt.Fprintf(b, "| new connections at most %.0f%% of the abandoned queries | %d of %d (%.1f%%) | %s |\n",
			100*giveUpConnShare, sh.sessions, sh.abandoned, 100*share, met(sh.abandoned > 0 && share <= giveUpConnShare))
		if px != nil && px.served > 0 {
			x := float64(sh.served) / float64(px.served)
			fmt.Fprintf(b, "| queries served at least %.1fx pgxpool's | %.2fx (%d against %d) | %s |\n", giveUpVsPgxpool, x, sh.served, px.served, met(x >= giveUpVsPgxpool))
		}
		b.WriteString("\nThe targets are shoalpgx's, judged on this run's figures above; with no abandoned query the first counts as missed (nothing was tested).\n\n")
	}
	for _, r := range runs {
		if r.stuck || r.closeStuck {
			fmt.Fprintf(b, "%s: callers stuck past the end: %v; close stuck: %v.\n\n", r.pool, r.stuck, r.closeStuck)
		}
	}
	if anyErrs(runs) {
		b.WriteString("The other errors:\n\n")
		for _, r := range runs {
			writeErrs(b, r.pool, r.errs)
		}
		b.WriteString("\n")
	}
}

func anyErrs(runs []giveUpRun) bool {
	for _, r := range runs {
		if len(r.errs) > 0 {
			return true
		}
	}
	return false
}

func findGiveUp(runs []giveUpRun, pool string) *giveUpRun {
	for i := range runs {
		if runs[i].pool == pool {
			return &runs[i]
		}
	}
	return nil
}

// countedHow says how new connections and cancel requests are counted.
const countedHow = "each counted as it finished its startup (pgconn's AfterConnect, beneath both pools); " +
	"cancel requests: dials through pgconn's DialFunc that connected and did not become a session, " +
	"each a connection of its own that pgconn opens to ask the server to cancel a query whose context ended while it ran " +
	"(in the pgx version measured, on the way to closing the query's connection)."

// ratio formats a/b with two decimals, or n/a.
func ratio(a, b int) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

// atServerMarkdown writes the MaxConns-at-the-server case.
func atServerMarkdown(b *strings.Builder, s atServerSpec, runs []atServerRun) {
	b.WriteString("#### MaxConns at the server\n\n")
	fmt.Fprintf(b, "%d callers on a pool of %d connections for %v, each running `%s` and giving up on it after %v, again at once.\n\n",
		s.callers, s.maxConns, s.duration, atServerSQL, s.abandon)
	mdtable.Header(b, "pool", "most connections at the server", fmt.Sprintf("samples above %d", s.maxConns), "samples", "queries abandoned", "new connections", "cancel requests", fmt.Sprintf("target: at most %d", s.maxConns))
	for _, r := range runs {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d | %d | %s |\n", r.pool, r.most, r.over, r.samples, r.abandoned, r.sessions, r.otherDials, met(r.most <= s.maxConns))
	}
	fmt.Fprintf(b, "\nConnections at the server: the pool's backends in pg_stat_activity, told apart from everyone else's by the application_name each pool sets, "+
		"counted every %v (internal/pgcount) from before the first caller started until the last had returned; a backend whose client has gone still counts "+
		"while it finishes the query it was running, as it still holds a server process and a slot in max_connections. "+
		"New connections: PostgreSQL sessions opened during the run, after each pool was warmed with its %d connections, %s "+
		"A cancel request's connection is the server's too while it lasts, but it holds no backend for long and the count does not show it. "+
		"The target, at most pool_max_conns at the server, is shoalpgx's; pgxpool's verdict is for comparison.\n\n", s.poll, s.maxConns, countedHow)
	for _, r := range runs {
		if r.completed > 0 || r.countErrs > 0 || r.stuck || r.closeStuck {
			fmt.Fprintf(b, "%s: queries that finished within %v: %d; failed samples: %d; callers stuck: %v; close stuck: %v.\n\n",
				r.pool, s.abandon, r.completed, r.countErrs, r.stuck, r.closeStuck)
		}
	}
}
