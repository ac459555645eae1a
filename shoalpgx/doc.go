// Package shoalpgx is a PostgreSQL connection pool for pgx v5, built on the
// shoal core pool and shaped like pgxpool, so that for most programs
// switching is a change of import path (see "What it does differently" for
// where it is not):
//
//	pool, err := shoalpgx.New(ctx, "postgres://app@db.internal/app?pool_max_conns=16")
//	if err != nil { ... }
//	defer pool.Close()
//	var n int
//	err = pool.QueryRow(ctx, "select count(*) from users").Scan(&n)
//
// # What it keeps from pgxpool
//
// The whole of pgxpool v5.12's API, with pgxpool's meaning: the method set
// (Acquire, AcquireFunc, AcquireAllIdle, Exec, Query, QueryRow, SendBatch,
// CopyFrom, Begin, BeginTx, Ping, Reset, Stat, Config, Close); the Config
// fields (ConnConfig, MaxConns, MinConns, MinIdleConns, MaxConnLifetime,
// MaxConnLifetimeJitter, MaxConnIdleTime, HealthCheckPeriod, PingTimeout),
// hooks (BeforeConnect, AfterConnect, PrepareConn, ShouldPing,
// AfterRelease, BeforeClose, and BeforeAcquire, deprecated in favour of
// PrepareConn as in pgxpool) and methods (Copy, ConnString); the types
// Conn, Tx (what Begin returns), Stat (with pgxpool.Stat's methods),
// ShouldPingParams, AcquireTracer, ReleaseTracer and their Trace*Data; and
// the pool_ keys of the connection string. An acquire does what pgxpool
// 5.12's does after taking a connection: ShouldPing (by default: idle
// longer than HealthCheckAfter, 1s), a ping that a caller who gives up
// does not cut short, then PrepareConn, trying another connection (MaxConns+1
// in all) when the ping fails or PrepareConn refuses. Stats returns shoal's
// fuller snapshot beside Stat. Config.ConnString hands back the connection
// string with its password, exactly as the caller's own string has it;
// Config.String leaves the password out. Log a Config, never its ConnString
// or ConnConfig: pgx's ConnConfig prints the password.
//
// # What it does differently
//
// pgx's own pgxpool test suite runs against shoalpgx in CI
// (scripts/pgxpool-suite.sh, with only the import path changed): 67 of its
// 71 tests pass, and the 4 that do not test the first four differences
// below, each listed with its reason in
// scripts/pgxpool-suite/expected-failures.txt.
//
//   - Background dials (for MinConns and MinIdleConns, and every other
//     dial) run under the pool's own context, ended by Close and bounded by
//     the connect timeout, not under one made from NewWithConfig's context;
//     NewWithConfig refuses a context that has already ended.
//   - A failed dial is retried after a backoff of 10-200ms, where pgxpool
//     dials once for each acquire that finds nothing idle (and retries its
//     MinConns only at the next HealthCheckPeriod); see the dial bullet
//     below for what callers see.
//   - Maintenance closes an idle connection soon after its lifetime ends
//     (at its next pass: within half of MaxConnLifetime, and a second at
//     most), where pgxpool leaves it until the next acquire or
//     HealthCheckPeriod.
//   - NewWithConfig returns an error for a Config not made by ParseConfig
//     (or a Copy of one), where pgxpool panics.
//   - An AcquireTracer or ReleaseTracer is told of a *shoalpgx.Pool, so a
//     tracer written for pgxpool, whose methods take a *pgxpool.Pool, is
//     not one until adapted (see "Tracing" below).
//   - Pings are decided by HealthCheckAfter when ShouldPing is nil, and a
//     look at the socket comes first (see "Things to know"): a TLS
//     connection with bytes waiting is pinged whatever ShouldPing says.
//     HealthCheckPeriod's background check makes that look, no round trip,
//     and 0 turns it off (pgxpool requires it to be positive).
//   - AcquireAllIdle's connections count in the statistics as acquires;
//     pgxpool's do not.
//   - A PrepareConn, BeforeAcquire or ShouldPing that panics closes its
//     connection before the panic goes on; AfterConnect's likewise.
//   - AfterRelease runs on the releasing goroutine; pgxpool starts a
//     goroutine for it.
//   - Acquire's errors say more: they wrap ctx.Err() (or shoal.ErrClosed,
//     or the dial's error) in a *shoal.AcquireError, except when ctx ends
//     during the ping, which returns ctx.Err() itself as pgxpool does.
//     errors.Is finds each.
//   - Checkout goes through shoal's partitioned lock-free idle stacks and a
//     first-come, first-served queue with bounded barging (BargeWindow,
//     4ms by default): a released connection goes to whoever asks next,
//     usually its releaser coming back, until the oldest waiter has waited
//     4ms (up to 16ms when more than 8 callers wait per connection), and
//     to the waiters in order after that. That keeps throughput
//     close to that of dedicated connections when goroutines outnumber
//     connections; pool_barge_window=0 gives strict FIFO hand-off.
//   - A connection is never handed out again in a state a new holder would
//     not expect. On release it is checked: idle and ready goes back to the
//     pool; released by its holder inside a transaction, it is closed, as in
//     pgxpool, so that a Tx still held cannot touch the next holder's
//     session (one the pool's own Begin or SendBatch left in a transaction
//     is rolled back in the background first, and closed if that fails);
//     busy (unread rows, a batch not closed) or closed by pgx is closed.
//   - Dials run in the background, at most MaxDialing at a time, with a
//     backoff while the server is down. pgxpool dials once for each acquire
//     that finds nothing idle and returns that dial's error, so a server
//     that is down gets a connect attempt per query. Here a pool that never
//     connected returns its first dial's error at once too; later, one
//     failed dial fails only the callers whose deadlines come before the
//     next try (a refused connect is a blip to wait through), and once dials
//     will have failed for 100ms the server counts as down and every caller
//     gets the dial's error at once, while the pool tries again every 200ms
//     at most. A refused login (SQLSTATE class 28: a wrong password, an
//     unknown role), an unknown database (3D000), a role that may not
//     connect (42501) and a TLS setup that cannot work are permanent: the
//     callers get the server's error at once, and the pool logs in again
//     only every 1s, doubling to 10s, while it lasts, and logs the failure
//     once, then once a minute, then when it ends.
//   - A statement whose context ends while it runs is cancelled at the
//     server (a PostgreSQL cancel request) and its connection kept, where
//     pgxpool's, on pgx's default handler, is closed and replaced; see
//     "Things to know". The caller returns with the server's answer,
//     usually a round trip or two after its deadline (a fork at the
//     server), CancelTimeout (1s) at most; its error matches both
//     ctx.Err() and the server's *pgconn.PgError (SQLSTATE 57014), where
//     pgxpool's is a timeout (pgconn.Timeout reports true for that one,
//     false for this). A transaction begun on the pool whose Commit or
//     Rollback comes with a context that has already ended (a deferred
//     Rollback after a statement cut short) fails as pgx's does, and is
//     rolled back in the background on a connection the pool keeps, where
//     pgx closes it. pool_cancel_timeout=0 gives pgx's behaviour back.
//   - A connection is closed in the background, never on the caller's
//     goroutine: pgx's close waits for the server, and through a network
//     that holds bytes a query that failed at its deadline would otherwise
//     return seconds late. The connection counts against MaxConns until its
//     close ends, and Close waits for it. One that pgx closed itself (its
//     statement's context ended and the server did not answer the cancel
//     request, or the connection broke) counts until pgx's cleanup (a
//     cancel request, Terminate, and the server's hang-up) has ended, half
//     a second at most: so the server never holds more of the pool's
//     connections than MaxConns, and a silent server does not keep a place
//     from a dial that could reach another host.
//   - Connection strings and errors are kept free of passwords: Config.String
//     leaves the password out, ParseConfig's errors show the string with the
//     password masked where it stands (never elsewhere: a password equal to
//     the user name leaves the user name alone) and refuse a string whose
//     password could be read as its host, and a failed connect's error
//     drops the pgconn.Config that pgx attaches to it. Your hooks' own
//     errors are passed on as they are.
//
// # Things to know
//
//   - When the context of a statement ends while the statement runs, the
//     pool asks the server to cancel it (ParseConfig installs the handler
//     as the ConnConfig's BuildContextWatcherHandler). The server answers
//     with SQLSTATE 57014, and the caller gets that answer as soon as it
//     comes, in an error that matches ctx.Err() too: errors.Is(err,
//     context.DeadlineExceeded) holds, and errors.As finds the
//     *pgconn.PgError. A statement that finished before the cancel reached
//     it returns its result, and a write the server acknowledged is never
//     reported as failed. (Statements run on the *pgx.Conn itself, through
//     Conn.Conn or Tx.Conn, return pgx's error, the *pgconn.PgError
//     alone.) The connection is kept; deadlines much tighter
//     than the statements' real duration cost a cancel request each (a
//     process started at the server, no login), not a reconnect. A server
//     that answers neither the statement nor the cancel request within
//     CancelTimeout (1s; pool_cancel_timeout) has the connection closed,
//     and the caller gets a timeout error then. A wait on the server with
//     no statement running (WaitForNotification), and a ping, are cut off
//     at the deadline as before. To have pgx close the connection instead,
//     set pool_cancel_timeout=0, or your own handler in
//     ConnConfig.BuildContextWatcherHandler after ParseConfig: pgx then
//     does what it says. A ConnConfig from ParseConfig used outside the
//     pool (pgx.ConnectConfig) behaves as pgx's default.
//   - A cancel request still on its way when the connection's next
//     statement starts would cancel that statement. So a connection whose
//     statement was cancelled stays out of the pool, counting against
//     MaxConns, and its holder's next statement waits, until the server
//     has acknowledged every cancel request (PostgreSQL closes the
//     request's connection only after it has signalled the backend, and a
//     backend drops a signal that finds it idle); that takes a moment, off
//     the caller's goroutine. A request the server never acknowledges has
//     the connection closed. This relies on the server closing a cancel
//     request's connection only once it has acted on it, as PostgreSQL
//     does: through a proxy that answers a cancel request before it has
//     passed it on, set pool_cancel_timeout=0.
//   - The socket under each of the pool's connections is wrapped, under TLS:
//     PgConn().Conn() of a plain-text connection is not a *net.TCPConn
//     (its NetConn method returns that); over TLS it is the *tls.Conn as
//     before.
//   - A connection the server killed while it sat idle is replaced by the
//     next acquire, not handed out: after a millisecond of idleness an
//     acquire looks at the socket (a close, or PostgreSQL's fatal error
//     message, shows there without a round trip), and after
//     HealthCheckAfter (1s) it pings. Over TLS the server's goodbye is an
//     encrypted record, so anything waiting there sends the acquire to the
//     ping at once. Every HealthCheckPeriod (1m) the same look runs on the
//     idle connections in the background, so that plain-text ones the
//     server killed are replaced before anyone asks. A connection killed
//     while a query runs on it fails that query, and only that one.
//   - A caller whose context ends while its connection is being pinged
//     gets ctx.Err() at once; the ping goes on, bounded by that context's
//     deadline, PingTimeout, and a minute after the caller left, and the
//     connection goes back to the pool if it answers (pgx closes a connection whose ping is cut
//     short, which would cost a healthy one; pgx issue #2680).
//   - Session state (SET, prepared statements, temporary tables outside a
//     transaction) stays with the connection, as in pgxpool.
//   - Close waits for every acquired connection to be released.
//
// # Several hosts and failover
//
// A connection string may name several hosts, as libpq's does, and
// target_session_attrs and load_balance_hosts mean what libpq says, for the
// whole pool:
//
//	postgres://app:secret@db1.internal:5432,db2.internal:5432/app?target_session_attrs=read-write
//
// With several hosts (or any target_session_attrs but any) the pool dials
// host by host itself rather than leaving the list to pgx, and asks each
// server one question in place of pgx's check (pg_is_in_recovery,
// transaction_read_only, and a standby's replay lag), so that it knows
// which host each connection is on and what the host was. The targets:
// any (the first host that answers), read-write (takes writes), read-only
// (refuses them: a standby, or a primary set read-only), primary (not in
// recovery), standby (in recovery), and prefer-standby (a standby, else
// any host). load_balance_hosts=random tries the hosts in a random order
// on each dial, spreading the pool's connections over the hosts that
// qualify; by default they are tried in the string's order, except that
// hosts which did not qualify or failed at the last look go last, so that
// after a failover a dial does not start with the old primary.
//
// A host that accepts connections and never answers (a crashed machine, a
// partition) would hold each dial for the whole connect timeout, 2 minutes
// by default. With several hosts and no connect_timeout in the string,
// each host gets HostConnectTimeout instead (2s; pool_host_connect_timeout),
// and a dial gives each host 250ms before it tries the next one as well (at
// once when one fails): the first to connect and qualify is used, the
// others are cancelled, or closed if they connect too. So a silent first
// host delays a dial by a quarter of a second, not by the connect timeout;
// and a host slower than that to connect can lose to the next one, where
// libpq would wait for it. When no host qualifies, the dial's error names
// each host and what it answered (refused, did not resolve, "server is a
// standby", ...), without the password.
//
// The pool notices when a host stops qualifying while it holds
// connections there. With read-write or primary (one host qualifies at a
// time) it resets itself as Pool.Reset does (idle connections close now,
// the others when they are released, and new ones are dialled through the
// host list) when a new connection lands on another host than the one
// before it, or when a write is refused with read_only_sql_transaction
// (SQLSTATE 25006): a primary fenced or demoted with its sessions still
// open. The write itself fails with the server's error (it did not
// happen); the ones after it reach the new primary. So that an idle pool
// learns of a fence before any write is refused, it also asks the server
// behind one idle connection, every RoleCheckPeriod (1s;
// pool_role_check_period), whether it still takes writes; each look counts
// in Stats as an acquire that did not wait. Errors of the pool's Exec,
// Query, QueryRow, CopyFrom and of Conn's and Tx's Exec count, not those
// of statements run on the *pgx.Conn itself. With read-only, standby or
// prefer-standby, an acquire asks a host again once it was last looked at
// more than RoleCheckPeriod ago (one acquire per host and period, one
// round trip), and a host that no longer qualifies (a standby promoted) has
// its connections closed, idle ones at their next acquire and the others
// on release. A prefer-standby pool that fell back to the primary (or whose
// standby was promoted under it) looks for a standby every RoleCheckPeriod,
// a dial round each time, and moves back to it when one qualifies; under a
// Budget it does not look, and moves back as its connections end. A
// connection that breaks is replaced alone: one session the server ended
// says nothing of the others.
//
// Hosts reports, per host, the pool's open connections, the role and lag
// at the last look, and the last dial error; shoalprom and shoalotel
// export them (AttachHosts).
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
// Its connections go to a standby within MaxStandbyLag of its primary
// (pool_max_standby_lag; no bound by default), and to the primary while no
// standby qualifies, back to a standby within a RoleCheckPeriod once one
// does. A standby that falls further behind has its read connections
// closed at their next acquire. Writes cannot go through it by mistake:
// its sessions are read-only (default_transaction_read_only=on, so the
// primary refuses them too, with SQLSTATE 25006), Begin starts read-only
// transactions, BeginTx refuses read-write ones, and it has no Exec or
// CopyFrom. (A Conn from its Acquire is a session like any other, and a
// holder who asks for writes explicitly, with BeginTx read-write or SET
// default_transaction_read_only = off, gets them where the server allows;
// such a connection is closed when released, never handed out again.) A
// read on a standby can miss what was just written on the
// primary: read your own writes through the Pool. The read pool is not
// counted in Config.Budget; ReadMaxConns (pool_read_max_conns) bounds it,
// and ReadObserver gives it metrics of its own.
//
// bench/failover measures a failover through the pool; its figures are in
// BENCHMARKS.md.
//
// # Tracing
//
// As in pgxpool, the pool traces its acquires and releases through
// ConnConfig.Tracer when that value also implements AcquireTracer or
// ReleaseTracer (pgx traces the queries through the same value). These
// interfaces name *shoalpgx.Pool where pgxpool's name *pgxpool.Pool, and
// no method can take both, so a tracer written for pgxpool traces the
// queries here but not the acquires until it is adapted. otelpgx's Tracer,
// for one, reads its pool argument only in TraceAcquireStart, for the
// server's address, port, user and database on the acquire span, and only
// when it is not nil; TraceAcquireEnd ignores it, and there is no
// TraceRelease. So it can be told of no pool at all, with two methods
// that shadow its pgxpool ones:
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
// The embedded tracer goes on tracing the queries, whose spans carry the
// server's attributes; the acquire spans lack them. Before handing nil to
// another tracer, read its code: one that uses the pool without a nil check
// would panic. For the pool's metrics (otelpgx.RecordStats reads a
// *pgxpool.Pool) use shoalotel or shoalprom through Config.Observer.
//
// # database/sql
//
// The sub-package stdlib gives code on database/sql (sqlx, sqlc's
// database/sql mode, goose, golang-migrate, gorm) a *sql.DB whose
// connections are leases from the pool, sharing one pool and one MaxConns
// with code on pgx. It is pgx's own stdlib package for a shoalpgx pool,
// under pgx's names, so that moving from pgx's OpenDBFromPool is a change
// of import path:
//
//	db := stdlib.OpenDBFromPool(pool) // github.com/shoalpool/shoal/shoalpgx/stdlib
//
// # A budget shared by processes
//
// N instances with MaxConns each open N x MaxConns connections between
// them. Config.Budget makes them share one limit instead (shoaletcd keeps
// one in etcd; Pool.SetMaxConns resizes one pool by hand):
//
//	budget, err := shoaletcd.New(ctx, etcdClient, shoaletcd.Options{Name: "orders-db", Size: 90, Min: 2})
//	if err != nil { ... }
//	defer budget.Close()
//	cfg, _ := shoalpgx.ParseConfig("postgres://app@db.internal/orders?pool_max_conns=32")
//	cfg.Budget = budget
//	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
//
// Each pool asks the budget for a permit before every dial, holds at most
// its share (and never more than MaxConns), and gives the permit back when
// the connection closes. A lease-based budget can count a slot twice while
// a process is paused past its lease with its connections open, so with a
// budget that has a FenceKey (shoaletcd's has) shoalpgx also fences at the
// server: each connection takes the session advisory lock
// pg_try_advisory_lock(FenceKey, slot) before it is handed out and keeps it
// for its life; the lock dies only with its backend. Before dialling with a
// slot whose last holder lost its lease (the permit's Suspect), the pool
// borrows one of its own connections (waiting up to a second) to look in
// pg_locks whether another session holds the slot, so that a refused slot
// costs no connection at the server, even for a moment; for any other slot
// it looks only if a connection is idle, since a borrowed one counts as a
// waiting caller in the pool's demand. When it cannot look, the lock taken
// after connecting still refuses the slot, and that connection closes
// within a round trip. A lock is given 100ms to go before a slot counts as
// held (a closed connection's backend ends a moment after its client). A
// refused dial fails with ErrSlotFenced and the budget gives another slot.
//
// What the fence costs: one query (and one advisory lock in the server's
// shared lock table) per connection opened, one more when a connection is
// idle at the dial or the slot is suspect; nothing per query. What breaks it: anything
// that releases session advisory locks on a pooled connection, that is
// pg_advisory_unlock_all(), pg_advisory_unlock on the budget's key, and
// DISCARD ALL (which a connection reset might run); after that the
// connection still counts in the budget but no longer fences its slot.
// It also needs the connections to reach PostgreSQL directly: behind
// PgBouncer in transaction mode a session lock belongs to whichever client
// holds the server connection.
//
// Operations on the pool (Exec, Query, ...) hold a connection only as long as
// pgxpool's do: Exec, CopyFrom and Ping until they return, Query until its
// rows are closed, QueryRow until Scan, SendBatch until its results are
// closed (or, for a batch that began a transaction, until that transaction
// ends), and Begin until the transaction commits or rolls back.
package shoalpgx
