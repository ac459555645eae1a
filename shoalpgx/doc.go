// Package shoalpgx is a PostgreSQL connection pool for pgx v5, built on the
// shoal core pool and shaped like pgxpool: the whole of pgxpool v5.12's API
// (methods, Config fields, hooks, the types Conn, Tx, Stat and the tracers,
// the pool_ keys of the connection string), with pgxpool's meaning, so that
// for most programs switching is a change of import path:
//
//	pool, err := shoalpgx.New(ctx, "postgres://app@db.internal/app?pool_max_conns=16")
//	if err != nil { ... }
//	defer pool.Close()
//	var n int
//	err = pool.QueryRow(ctx, "select count(*) from users").Scan(&n)
//
// This is the reference. The guides are in the repository's docs/:
// docs/postgres.md (this package and its stdlib, how they behave),
// docs/from-pgxpool.md (every difference from pgxpool, and why),
// docs/operating.md (failover, budgets, a server that is down, the errors)
// and docs/settings.md (every setting with its default).
//
// # Where it differs from pgxpool
//
// pgx's own pgxpool test suite runs against shoalpgx in CI
// (scripts/pgxpool-suite.sh, with only the import path changed): 67 of its
// 71 tests pass, and the 4 that do not are listed with their reasons in
// scripts/pgxpool-suite/expected-failures.txt. In short:
//
//   - Dials run in the background, under the pool's own context, at most
//     MaxDialing at a time, with a backoff; a server that is down fails
//     callers at once with the dial's error, and a refused login is tried
//     again only every 1s, doubling to 10s. pgxpool dials once for each
//     acquire that finds nothing idle.
//   - A statement whose context ends is cancelled at the server and its
//     connection kept (see Cancellation); pgxpool's is closed.
//   - Checkout is first come, first served with bounded barging
//     (BargeWindow, 4ms): a released connection goes to whoever asks next
//     until the oldest waiter has waited that long. pool_barge_window=0 is
//     strict hand-off.
//   - Connections close in the background and count against MaxConns until
//     their close ends, so the server never holds more than MaxConns of
//     them. A connection released inside a transaction, busy, or closed by
//     pgx is closed, never handed out again.
//   - Maintenance closes an idle connection soon after its lifetime ends;
//     NewWithConfig returns an error for a Config not made by ParseConfig,
//     where pgxpool panics; tracers are told of a *shoalpgx.Pool (see
//     Tracing); Acquire's errors are *shoal.AcquireError, which wrap the
//     context's error, shoal.ErrClosed or the dial's.
//   - Config.String, ParseConfig's errors and a failed connect's error never
//     show the password. Log a Config, never its ConnString or ConnConfig:
//     pgx's ConnConfig prints the password.
//
// # Cancellation
//
// When the context of a statement ends while the statement runs, the pool
// asks the server to cancel it (ParseConfig installs the handler as the
// ConnConfig's BuildContextWatcherHandler) and keeps the connection. The
// caller returns with the server's answer, usually a round trip or two after
// its deadline, CancelTimeout (1s; pool_cancel_timeout) at most, in an error
// that matches both ctx.Err() and the server's *pgconn.PgError (SQLSTATE
// 57014). A statement that finished before the cancel reached it returns its
// result: a write the server acknowledged is never reported as failed. The
// connection stays out of the pool, counting against MaxConns, until the
// server has acknowledged every cancel request, so that none can reach its
// next statement; this relies on the server closing a cancel request's
// connection only once it has acted on it, as PostgreSQL does. Through a
// proxy that answers cancel requests itself, or to have pgx close the
// connection as it does by default, set pool_cancel_timeout=0.
//
// An acquire looks at an idle connection's socket (after a millisecond of
// idleness, no round trip) and pings it after HealthCheckAfter (1s), so a
// connection the server ended while it was idle is replaced, not handed out.
// A caller whose context ends during that ping gets ctx.Err() at once, and
// the ping goes on without it (pgx closes a connection whose ping is cut
// short; pgx issue #2680).
//
// # Several hosts and failover
//
// A connection string may name several hosts, as libpq's does, and
// target_session_attrs (any, read-write, read-only, primary, standby,
// prefer-standby) and load_balance_hosts mean what libpq says, for the whole
// pool:
//
//	postgres://app:secret@db1.internal:5432,db2.internal:5432/app?target_session_attrs=read-write
//
// The pool then dials host by host itself and asks each server its role and
// replay lag in one query, so it knows which host each connection is on. A
// dial gives each host 250ms before it tries the next one as well, and
// HostConnectTimeout (2s) at most when the string sets no connect_timeout,
// so a silent host does not hold a dial for the 2-minute connect timeout.
// With read-write or primary the pool resets itself (as Reset does) when a
// new connection lands on another host, when a write is refused with
// SQLSTATE 25006, or when its look at an idle connection's server every
// RoleCheckPeriod (1s) finds it no longer takes writes; with read-only,
// standby or prefer-standby, a host that stops qualifying has its
// connections closed. Hosts reports each host's connections, role, lag and
// last dial error; shoalprom and shoalotel export them (AttachHosts).
//
// # Reads on standbys
//
// Reads returns a ReadPool, a pool of its own on the same hosts, for the
// queries that may run on a standby:
//
//	pool, err := shoalpgx.New(ctx, "postgres://app:secret@db1:5432,db2:5432/app?target_session_attrs=read-write&pool_max_standby_lag=1s")
//	...
//	var n int
//	err = pool.Reads().QueryRow(ctx, "select count(*) from orders").Scan(&n) // on a standby
//	_, err = pool.Exec(ctx, "insert into orders ...")                        // on the primary
//
// Its connections go to a standby within MaxStandbyLag of its primary, and
// to the primary while no standby qualifies. Its sessions are read-only,
// Begin starts read-only transactions, and it has no Exec or CopyFrom. A
// read on a standby can miss what was just written on the primary: read
// your own writes through the Pool. ReadMaxConns bounds it and ReadObserver
// gives it metrics of its own; it is not counted in Config.Budget.
//
// # Tracing
//
// As in pgxpool, the pool traces its acquires and releases through
// ConnConfig.Tracer when that value also implements AcquireTracer or
// ReleaseTracer. These name *shoalpgx.Pool where pgxpool's name
// *pgxpool.Pool, so a tracer written for pgxpool (otelpgx's) traces the
// queries here but not the acquires until it is adapted; otelpgx's reads
// the pool only for attributes, and only when it is not nil, so it can be
// told of none:
//
//	type acquireTracer struct{ *otelpgx.Tracer }
//
//	func (t acquireTracer) TraceAcquireStart(ctx context.Context, _ *shoalpgx.Pool, _ shoalpgx.TraceAcquireStartData) context.Context {
//		return t.Tracer.TraceAcquireStart(ctx, nil, pgxpool.TraceAcquireStartData{})
//	}
//
//	func (t acquireTracer) TraceAcquireEnd(ctx context.Context, _ *shoalpgx.Pool, d shoalpgx.TraceAcquireEndData) {
//		t.Tracer.TraceAcquireEnd(ctx, nil, pgxpool.TraceAcquireEndData{Conn: d.Conn, Err: d.Err})
//	}
//
//	cfg.ConnConfig.Tracer = acquireTracer{otelpgx.NewTracer()}
//
// Read a tracer's code before handing it nil: one that uses the pool
// without a nil check would panic. For the pool's metrics use shoalotel or
// shoalprom through Config.Observer.
//
// # database/sql
//
// The sub-package stdlib is pgx's stdlib for a shoalpgx pool, under pgx's
// names: a *sql.DB whose connections are leases from the pool, for code on
// database/sql (sqlx, goose, gorm, ...), sharing one MaxConns with code on
// pgx:
//
//	db := stdlib.OpenDBFromPool(pool) // github.com/shoalpool/shoal/shoalpgx/stdlib
//
// # A budget shared by processes
//
// Config.Budget shares one connection limit between pools in many processes
// (shoaletcd keeps one in etcd; docs/operating.md). Each pool asks the
// budget for a permit before every dial, holds at most its share, and gives
// the permit back when the connection closes. A lease-based budget can count
// a slot twice while a process is paused past its lease with its
// connections open, so with a budget that has a FenceKey (shoaletcd's has)
// shoalpgx also fences at the server: each connection takes the session
// advisory lock pg_try_advisory_lock(FenceKey, slot) before it is handed out
// and keeps it for its life, and a dial whose slot is still locked by
// another backend fails with ErrSlotFenced (the budget gives another slot).
// Before dialling with a slot whose last holder lost its lease, the pool
// looks in pg_locks through one of its own connections, so that a refused
// slot costs no connection at the server.
//
// What the fence costs: one query (and one advisory lock in the server's
// shared lock table) per connection opened, one more when a connection is
// idle at the dial or the slot is suspect; nothing per query. What breaks
// it: anything that releases session advisory locks on a pooled connection,
// that is pg_advisory_unlock_all(), pg_advisory_unlock on the budget's key,
// and DISCARD ALL; after that the connection still counts in the budget but
// no longer fences its slot. It also needs the connections to reach
// PostgreSQL directly: behind PgBouncer in transaction mode a session lock
// belongs to whichever client holds the server connection.
//
// # Things to know
//
// Operations on the pool (Exec, Query, ...) hold a connection only as long
// as pgxpool's do: Exec, CopyFrom and Ping until they return, Query until
// its rows are closed, QueryRow until Scan, SendBatch until its results are
// closed (or, for a batch that began a transaction, until that transaction
// ends), and Begin until the transaction commits or rolls back. Session
// state (SET, prepared statements, temporary tables outside a transaction)
// stays with the connection, as in pgxpool. Close waits for every acquired
// connection to be released. The socket under each connection is wrapped,
// under TLS: PgConn().Conn() of a plain-text connection is not a
// *net.TCPConn (its NetConn method returns that).
package shoalpgx
