package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/bench/internal/pgurl"
	"github.com/shoalpool/shoal/shoalhttp"
)

// neverSpec is the never-connected case's shape.
type neverSpec struct {
	tries    int           // fresh clients per contender against the refused port
	deadline time.Duration // the first request's deadline
	window   time.Duration // how long a pool that cannot log in is watched after its first error
	dsn      string        // the real server, for the login failures; "" skips them
}

// A refusedClient is a client that can make one first request through a
// dial: a fresh pool or transport, its first request, and its close.
type refusedClient struct {
	name string
	open func(addr string, dial dialFunc) (request func(context.Context) error, closeFn func(), err error)
}

// refusedMaxConns is the pools' size against the refused port.
const refusedMaxConns = 4

var refusedClients = []refusedClient{
	{name: "shoal core (net.Conn)", open: func(addr string, dial dialFunc) (func(context.Context) error, func(), error) {
		p, err := shoal.New(shoal.Config[net.Conn]{
			Dial:     func(ctx context.Context) (net.Conn, error) { return dial(ctx, "tcp", addr) },
			Close:    net.Conn.Close,
			MaxConns: refusedMaxConns,
		})
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context) error {
				l, err := p.Acquire(ctx)
				if err == nil {
					l.Release()
				}
				return err
			}, func() {
				ctx, cancel := context.WithTimeout(context.Background(), closeWait)
				defer cancel()
				_ = p.Close(ctx)
			}, nil
	}},
	{name: "shoalhttp GET", open: func(addr string, dial dialFunc) (func(context.Context) error, func(), error) {
		t, err := shoalhttp.NewTransport(shoalhttp.Options{DialContext: dial})
		if err != nil {
			return nil, nil, err
		}
		return httpGet(&http.Client{Transport: t}, "http://"+addr+"/"), func() {
			ctx, cancel := context.WithTimeout(context.Background(), closeWait)
			defer cancel()
			_ = t.Close(ctx)
		}, nil
	}},
	{name: "net/http GET", open: func(addr string, dial dialFunc) (func(context.Context) error, func(), error) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = dial
		return httpGet(&http.Client{Transport: t}, "http://"+addr+"/"), t.CloseIdleConnections, nil
	}},
	pgRefused(0),
	pgRefused(1),
}

// pgRefused is pgContenders[i] pinging a server at the refused address.
func pgRefused(i int) refusedClient {
	c := pgContenders[i]
	return refusedClient{name: c.name + " Ping", open: func(addr string, dial dialFunc) (func(context.Context) error, func(), error) {
		// No password: nothing answers to ask for one.
		cs := fmt.Sprintf("postgres://outage@%s/outage?sslmode=disable&pool_max_conns=%d", addr, refusedMaxConns)
		p, err := c.open(context.Background(), cs, pgOptions{dial: dial})
		if err != nil {
			return nil, nil, err
		}
		return p.Ping, p.Close, nil
	}}
}

// httpGet returns a request that GETs target through client and reads the
// whole body.
func httpGet(client *http.Client, target string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := drain(resp); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	}
}

// firstTry is one fresh client's first request.
type firstTry struct {
	took   time.Duration // from the client's creation to the request's end
	dials  int           // dial attempts begun by then
	err    error         // nil when the request succeeded, which it should not
	closed bool          // the client's close returned within closeWait
}

// refusedRow is every try of one client.
type refusedRow struct {
	client string
	tries  []firstTry
}

// refusedAddr returns a loopback address that refuses connections: a port
// that was just listened on and closed, so nothing listens there.
func refusedAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// tryFirst makes one fresh client's first request, timed from the client's
// creation, and closes the client.
func tryFirst(open func(dial dialFunc) (func(context.Context) error, func(), error), deadline time.Duration) firstTry {
	start := time.Now()
	dials := newDialLog(start)
	request, closeFn, err := open(dials.wrap(tcpDial))
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		err = request(ctx)
		cancel()
	}
	t := firstTry{took: time.Since(start), err: err, closed: true}
	t.dials = window(dials.snapshot(), 0, t.took).started
	if closeFn != nil {
		t.closed = closeBounded(closeFn)
	}
	return t
}

// runRefused runs every refused client s.tries times, each on a fresh
// refused port; the clients take turns within each round.
func runRefused(s neverSpec) ([]refusedRow, error) {
	rows := make([]refusedRow, len(refusedClients))
	for i, c := range refusedClients {
		rows[i].client = c.name
	}
	for range s.tries {
		for i, c := range refusedClients {
			addr, err := refusedAddr()
			if err != nil {
				return nil, err
			}
			t := tryFirst(func(dial dialFunc) (func(context.Context) error, func(), error) { return c.open(addr, dial) }, s.deadline)
			rows[i].tries = append(rows[i].tries, t)
		}
	}
	return rows, nil
}

// A loginFault is a server that answers and refuses the pool's login.
type loginFault struct {
	name string
	// edit makes the fault in the real connection string.
	edit func(u *url.URL)
}

var loginFaults = []loginFault{
	{name: "wrong password", edit: func(u *url.URL) {
		u.User = url.UserPassword(u.User.Username(), "not-the-password")
	}},
	{name: "unknown database", edit: func(u *url.URL) { u.Path = "/shoal_outage_no_such_database" }},
}

// loginRow is one pool against one login fault.
type loginRow struct {
	fault, pool string
	first       firstTry
	// after are the dials in the window after the first error.
	after  dialFigures
	window time.Duration
	// logsBefore is what the pool logged from its creation to the first
	// error, logs what it had logged by the window's end; nil for a pool
	// that takes no logger.
	logsBefore, logs *logTally
	// leaked: the password appeared in the first error or a log line.
	leaked bool
}

// runLogins runs every pool against every login fault on the real server:
// with pool_min_conns=1, the first Ping's error, then s.window of the pool
// left to itself.
func runLogins(s neverSpec) ([]loginRow, error) {
	var rows []loginRow
	for _, f := range loginFaults {
		cs, err := pgurl.Edit(s.dsn, f.edit)
		if err != nil {
			return nil, err
		}
		if cs, err = pgurl.WithParams(cs, "pool_min_conns", "1", "pool_max_conns", fmt.Sprint(refusedMaxConns)); err != nil {
			return nil, err
		}
		for _, c := range pgContenders {
			rows = append(rows, loginOnce(s, f.name, cs, c))
		}
	}
	return rows, nil
}

// loginOnce opens c on cs, whose login the server refuses, times its
// first Ping's error, and watches the pool for s.window after it.
func loginOnce(s neverSpec, fault, cs string, c pgContender) loginRow {
	secrets := []string{password(cs), password(s.dsn)}
	row := loginRow{fault: fault, pool: c.name, window: s.window}
	start := time.Now()
	dials := newDialLog(start)
	o := dials.pgOptions("shoal-outage-login")
	var logs *logCount
	if c.logs {
		logs = newLogCount(secrets...)
		o.logger = slog.New(logs)
	}
	p, err := c.open(context.Background(), cs, o)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.deadline)
		err = p.Ping(ctx)
		cancel()
	}
	row.first = firstTry{took: time.Since(start), err: err, closed: true}
	row.first.dials = window(dials.snapshot(), 0, row.first.took).started
	if logs != nil {
		t := logs.tally()
		row.logsBefore = &t
	}
	if p != nil {
		time.Sleep(s.window)
		row.after = window(dials.snapshot(), row.first.took, row.first.took+s.window)
		row.first.closed = closeBounded(p.Close)
	}
	if logs != nil {
		t := logs.tally()
		row.logs = &t
		row.leaked = t.leaked
	}
	for _, secret := range secrets {
		if err != nil && containsSecret(err.Error(), secret) {
			row.leaked = true
		}
	}
	return row
}

// containsSecret reports whether s holds a non-empty secret.
func containsSecret(s, secret string) bool {
	return secret != "" && strings.Contains(s, secret)
}
