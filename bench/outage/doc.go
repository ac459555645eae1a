// Command outage measures how pools fail: what shoal's pools and their
// peers (pgxpool, net/http) do when what they connect to is not there,
// side by side in one run, each pool on its own, one after the other. It
// only measures: it asks nothing of a pool but its public API, so it runs
// against the library as it is on the branch and against whatever changes
// land later. The cases (-cases picks some, in this order):
//
//   - never: a server that never answered. Against a loopback port nothing
//     listens on (listened on and closed), a fresh client's first request,
//     -tries times each (the median is reported): shoal's core pool
//     (net.Conn, MaxConns 4) Acquire, shoalhttp and a clone of
//     http.DefaultTransport GET, shoalpgx and pgxpool (pool_max_conns=4)
//     Ping. Then, against the shared PostgreSQL, a server that answers and
//     refuses the login, a wrong password and an unknown database, with
//     pool_min_conns=1: the first Ping's error, and in the -login-window
//     (6s) after it the pool's connect attempts and log lines (shoalpgx's
//     Config.Logger into a counting slog handler; pgxpool takes no logger).
//   - pg-down: a PostgreSQL that stops for -down (3s) under load: 32
//     workers of SELECT 1, each with a 1s deadline, pool_max_conns=8. The
//     server is a throwaway cluster of this program's own (initdb into a
//     temporary directory as postgres, a free loopback port, SCRAM),
//     stopped fast (SIGINT to the postmaster, as pg_ctl stop -m fast) and
//     started again, and removed at the end. That is more robust than the
//     HA pair's primary (internal/pgpair): it is nobody else's, so there
//     is no lock to wait for and no standby to disturb or rebuild, and the
//     kernel stops it if this program dies (Pdeathsig). It takes root or
//     the postgres user.
//   - http-down: the same for HTTP: a net/http server on a loopback port
//     that closes its listener and every connection for -down and comes
//     back on the same port; shoalhttp (MaxConns 8) against net/http
//     (MaxConnsPerHost 8, and MaxIdleConnsPerHost 8 so that it keeps what
//     it opens).
//   - give-up: 128 callers on pool_max_conns=4 for -duration (3s), every
//     tenth query SELECT pg_sleep(0.005) with a 2ms deadline, the rest
//     SELECT 1 without one: queries served, abandoned, and the new
//     connections this costs, against shoalpgx's targets (new connections
//     at most 2% of its abandoned queries, at least 1.5x pgxpool's queries
//     served).
//   - at-server: 32 callers each running SELECT pg_sleep(1) and giving up
//     after 50ms, pool_max_conns=4, for -duration: the most connections of
//     the pool pg_stat_activity shows (by application_name, every 20ms),
//     against the target of at most 4.
//
// In the outage cases a worker whose call failed waits -fail-pause (10ms)
// before its next call, so that a pool that fails at once does not spin
// the machine (the report says why; -fail-pause 0 turns it off).
// Connection attempts are counted in the dialer beneath each pool
// (pgconn's DialFunc, the transports' DialContext), and PostgreSQL
// sessions by pgconn's AfterConnect, which tells them from the cancel
// requests pgconn dials for.
//
// Run it from bench/, as root (for pg-down), with the shared server's
// address in the environment:
//
//	. ../scripts/test-env.sh
//	go run ./outage -out results/outage.md
//
// It prints the report and writes it, with the machine and the command, as
// a markdown fragment to -out. Everything runs against loopback, every
// loop is bounded in time, and every server it starts is stopped.
package main
