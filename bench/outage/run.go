package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// errNoDSN is why the cases on the shared server do not run without one.
var errNoDSN = errors.New("no connection string for the shared PostgreSQL: set SHOAL_TEST_POSTGRES (scripts/test-env.sh) or -dsn")

// A section runs one case and writes its part of the report. An error
// with nothing written means the case did not run, and the report says why
// in its place; a section that ran in part writes that part and says what
// did not run itself.
type section struct {
	title func(o options) string
	run   func(ctx context.Context, o options, b *strings.Builder) error
}

var sections = map[string]section{
	caseNever:    {title: func(options) string { return "Never connected" }, run: neverSection},
	casePGDown:   {title: pgDownTitle, run: pgDownSection},
	caseHTTPDown: {title: httpDownTitle, run: httpDownSection},
	caseGiveUp:   {title: func(options) string { return "Callers that give up" }, run: giveUpSection},
	caseAtServer: {title: func(options) string { return "MaxConns at the server" }, run: atServerSection},
}

// run runs o's cases and returns the report. A case that cannot run says
// why in its place; the error joins every such reason.
func run(ctx context.Context, o options, cmd string) (string, error) {
	var errs []error
	pgVersion := ""
	if o.dsn != "" {
		v, err := serverVersion(ctx, o.dsn)
		if err != nil {
			errs = append(errs, fmt.Errorf("the shared PostgreSQL: %w", err))
		}
		pgVersion = v
	}
	var body strings.Builder
	for _, c := range o.cases {
		fmt.Fprintf(os.Stderr, "outage: %s\n", c)
		s := sections[c]
		var part strings.Builder
		err := s.run(ctx, o, &part)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c, err))
			if part.Len() == 0 {
				fmt.Fprintf(&body, "#### %s\n\nNot run: %s.\n\n", s.title(o), err)
			}
		}
		body.WriteString(part.String())
	}
	var b strings.Builder
	b.WriteString("### Outages: how pools fail\n\n")
	fmt.Fprintf(&b, "Machine: %s.\n", machine(pgVersion))
	fmt.Fprintf(&b, "Command (from bench/, as root, after `. ../scripts/test-env.sh`): `%s`\n\n", cmd)
	b.WriteString("What each pool does when what it connects to is not there: never was, goes away under load and comes back, or is left by callers that give up. " +
		"Every server is on loopback; every figure is this run's, each pool on its own, one after the other.\n\n")
	b.WriteString(body.String())
	return b.String(), errors.Join(errs...)
}

// neverSection runs the never-connected case: the refused port always,
// the refused logins when there is a shared server.
func neverSection(_ context.Context, o options, b *strings.Builder) error {
	refused, err := runRefused(o.never)
	if err != nil {
		return err
	}
	var logins []loginRow
	loginErr := errNoDSN
	if o.dsn != "" {
		logins, loginErr = runLogins(o.never)
	}
	neverMarkdown(b, o.never, refused, logins, loginErr)
	if o.dsn != "" && loginErr != nil {
		return fmt.Errorf("the refused logins: %w", loginErr)
	}
	return nil
}

func pgDownTitle(o options) string {
	return fmt.Sprintf("PostgreSQL down for %v under load", o.pgDown.down)
}

// pgDownSection makes the throwaway server, runs the pools through its
// outage, removes it, and writes the case.
func pgDownSection(ctx context.Context, o options, b *strings.Builder) error {
	srv, err := newTempServer(ctx, o.pgBin)
	if err != nil {
		return err
	}
	remove := addCleanup(srv.remove)
	defer remove()
	version, err := serverVersion(ctx, srv.cs)
	if err != nil {
		return err
	}
	runs, err := runPGDown(ctx, srv, o.pgDown)
	if err != nil {
		return err
	}
	downMarkdown(b, downText{title: pgDownTitle(o), call: "query", calls: "queries", dial: "connect attempts",
		setup: fmt.Sprintf("shoalpgx and pgxpool with pool_max_conns=%d, each query `%s`, against a throwaway cluster of this program's own (%s, SCRAM, on a free loopback port), "+
			"stopped as `pg_ctl stop -m fast` would (SIGINT to the postmaster: sessions ended, a clean shutdown) and started again.",
			o.pgDown.maxConns, pgDownSQL, version),
		connsAt: fmt.Sprintf("pg_stat_activity showed %d of the pool's connections (its application_name, counted every %v)", o.pgDown.maxConns, countPoll),
		legend: "The server is a throwaway cluster rather than the HA pair's primary (internal/pgpair) because it is this program's alone: no lock to wait for behind other people's tests, " +
			"no synchronous standby whose state a restart disturbs, nothing to rebuild if the run dies halfway (the kernel stops the server with this process, Pdeathsig), " +
			"and its start is timed by the program's own probe, not pg_ctl's 100ms poll. " +
			"The return: when the probe's first successful connection began (it connects every 5ms while the server starts). " +
			"Connect attempts are calls of pgconn's DialFunc, beneath both pools; a cancel request, which pgconn dials for when a query's context ends while it runs, would count as one too.",
	}, o.pgDown, runs)
	return nil
}

func httpDownTitle(o options) string {
	return fmt.Sprintf("HTTP server down for %v under load", o.httpDown.down)
}

// httpDownSection runs the clients through the HTTP server's outage and
// writes the case.
func httpDownSection(_ context.Context, o options, b *strings.Builder) error {
	runs, err := runHTTPDown(o.httpDown)
	if err != nil {
		return err
	}
	n := o.httpDown.maxConns
	downMarkdown(b, downText{title: httpDownTitle(o), call: "request", calls: "requests", dial: "dial attempts",
		setup: fmt.Sprintf("shoalhttp (Options{MaxConns: %d}) and net/http (a clone of http.DefaultTransport with MaxConnsPerHost %d, and MaxIdleConnsPerHost %d so that it keeps what it opens), "+
			"each request a GET of a two-byte body, against a net/http server on a loopback port that goes away (its listener and every connection closed, http.Server.Close) "+
			"and comes back on the same port.", n, n, n),
		connsAt: fmt.Sprintf("the server held %d connections (counted by its ConnState hook)", n),
		legend:  "The return: when the new listener was bound.",
	}, o.httpDown, runs)
	return nil
}

// giveUpSection runs the callers-that-give-up case on the shared server.
func giveUpSection(ctx context.Context, o options, b *strings.Builder) error {
	if o.dsn == "" {
		return errNoDSN
	}
	runs, err := runGiveUp(ctx, o.dsn, o.giveUp)
	if err != nil {
		return err
	}
	giveUpMarkdown(b, o.giveUp, runs)
	return nil
}

// atServerSection runs the MaxConns-at-the-server case on the shared
// server.
func atServerSection(ctx context.Context, o options, b *strings.Builder) error {
	if o.dsn == "" {
		return errNoDSN
	}
	runs, err := runAtServer(ctx, o.dsn, o.atServer)
	if err != nil {
		return err
	}
	atServerMarkdown(b, o.atServer, runs)
	return nil
}

// serverVersion asks the server at cs for its version.
func serverVersion(ctx context.Context, cs string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cs)
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	var v string
	err = c.QueryRow(ctx, "SELECT 'PostgreSQL ' || current_setting('server_version')").Scan(&v)
	return v, err
}
