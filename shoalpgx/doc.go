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
//     their close ends (the server hanging up as the backend exits, half a
//     second at most, or five for one pgx closed on a server that has
//     answered since), so the server never holds more than MaxConns of
//     them. A connection released inside a transaction, busy, or closed by
//     pgx is closed, never handed out again.
//   - Maintenance closes an idle connection soon after its lifetime ends;
//     NewWithConfig returns an error for a Config not made by ParseConfig,
//     where pgxpool panics; tracers are told of a *shoalpgx.Pool (see
//     Tracing); Acquire's errors are *shoal.AcquireError, which wrap the
//     context's error, shoal.ErrClosed or the dial's.
//   - Every pool has a name (Config.Name, pool_name; by default
//     host:port/database, the read pool's that plus "/reads"), carried on
//     its log lines, errors and statistics. Config.Logger nil means
//     slog.Default(). Warm opens max(MinConns, MinIdleConns) connections
//     and waits for them. Stat has pgxpool's methods, and Stat().Shoal()
//     the core's fuller shoal.Stats.
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
// short).
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
// new connection lands on another host while the pool still has
// connections on the one before, when a write is refused with
// SQLSTATE 25006 and the server, asked once the refused write's session is
// outside a transaction, confirms it refuses writes (so a transaction the
// caller made read-only itself resets nothing), or when its look at an
// idle connection's server every RoleCheckPeriod (1s) finds it no longer
// takes writes; with read-only,
// standby or prefer-standby, a host that stops qualifying has its
// connections closed. Hosts reports, per host, the pool's own connections
// and the role, lag and last dial error it last saw; shoalprom and
// shoalotel export them (AttachHosts).
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
// gives it metrics of its own; it is not counted in Config.Budget. Its
// connections are its own in every figure: pool.Stat() and pool.Hosts()
// leave them out, pool.Reads().Stat() and pool.Reads().Hosts() count them:
//
//	for _, h := range pool.Hosts() { // the primary: 127.0.0.1:5441 primary 1
//		fmt.Println(h.Addr, h.Role, h.Open)
//	}
//	for _, h := range pool.Reads().Hosts() { // and a standby: 127.0.0.1:5442 standby 1
//		fmt.Println(h.Addr, h.Role, h.Open)
//	}
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
// the permit back when the connection closes, once the server has ended its
// backend: a close sends Terminate and waits for the server to hang up
// (5 seconds at most), a Close of the *pgx.Conn under an acquired Conn
// included, so that no other pool takes the permit while the backend still
// counts at the server. A lease-based budget can count
// a slot twice while a process is paused past its lease with its
// connections open, so with a budget that has a FenceKey (shoaletcd's has)
// shoalpgx also fences at the server: each connection takes the session
// advisory lock pg_try_advisory_lock(FenceKey, slot) before it is handed out
// and keeps it for its life (a Conn you Hijack lets go of it as its permit
// goes back), and a dial whose slot is still locked by another backend
// fails with ErrSlotFenced (the budget gives another slot).
// Before dialling with a slot whose last holder lost its lease, the pool
// looks in pg_locks through one of its own connections (with Pipeline, a
// shared one first), so that a refused slot costs no connection at the
// server.
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
// # Pipelining
//
// With Config.Pipeline (pool_pipeline) above 0, the statements that the
// pool's Exec, Query, QueryRow and SendBatch run outside a transaction
// share connections: up to Pipeline of them in flight on one, each with
// its own Sync, so that each runs in its own implicit transaction and
// succeeds or fails alone, and answers come back in order to their own
// callers. A new statement goes to the busiest shared connection that
// would answer it within PipelineFill, else to the least-loaded one. A
// statement completes at its ReadyForQuery, so an error at the implicit
// commit (a deferred constraint) is its caller's error, never a success.
// A SendBatch shares one Sync, as pgx's does; an error at its commit is
// every statement's result and Close's, where pgx gives it to Close alone.
// A lone caller reads its own answer, as on a whole connection.
//
// What never shares a connection: Begin and BeginTx, Acquire and
// AcquireFunc, CopyFrom, Ping, database/sql (stdlib), and statements that
// would leave state in the session or span a transaction, which go to a
// whole connection as without pipelining: those whose first keyword is
// BEGIN, START, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE, PREPARE,
// EXECUTE, DEALLOCATE, SET, RESET, LISTEN, UNLISTEN, DECLARE, FETCH, MOVE,
// CLOSE, DISCARD, LOCK, COPY, LOAD, DO, or CREATE [OR REPLACE] TEMP (past
// comments, nested ones too, and empty statements: ";SET" is a SET);
// those that hold INTO TEMP (SELECT ... INTO [LOCAL | GLOBAL] TEMP t) or
// name pg_temp or pg_settings (an UPDATE of which is a SET); an EXPLAIN
// of any of these; those that call
// pg_advisory_lock, pg_try_advisory_lock, pg_advisory_unlock, set_config
// or dblink_connect; an Exec without arguments whose text holds a ';';
// a text of one word, with no space in it, which pgx takes for the name
// of a statement prepared on the connection (conn.Prepare in
// AfterConnect) when there is one; a batch that begins a transaction or
// holds any of these; and statements
// with pgx's simple protocol, QueryResultFormats, QueryResultFormatsByOID
// or a QueryRewriter other than NamedArgs and StrictNamedArgs (and named
// arguments that do not fit the SQL, which pgx fails there). The look is
// at the text: a function of your own that changes the session is not
// seen, so call it on an acquired Conn. A statement that leaves a
// transaction open anyway fails, with the statements behind it on its
// connection, which is closed so that the server rolls them all back.
//
// The shared connections are dialled as the others (AfterConnect, the
// hosts logic and the types AfterConnect registers all apply), then taken
// over from pgx: PrepareConn, BeforeAcquire, ShouldPing, AfterRelease and
// BeforeClose are not called for them. pgx's QueryTracer and BatchTracer
// (ConnConfig.Tracer) see pipelined statements as they would on a whole
// connection, with the shared connection's *pgx.Conn, to be read
// (Config, PgConn().PID()) and never used; a Query's trace ends when its
// rows close. Three differences remain. pgx's PrepareTracer hears of no
// pipelined statement: one is prepared beside its first run, not before
// it, and CacheDescribe and DescribeExec describe nothing first. A
// statement or batch whose caller gives up ends its trace at once with the
// caller's error, the context's, where pgx's ends with the server's
// query_canceled once a cancel request stopped it (a pipelined statement
// is not cancelled, see above), and that batch traces none of its
// queries. A failed batch traces its queries up to the one that failed,
// as pgx does but in QueryExecModeExec, where pgx traces the ones after it
// too, with its error. Pipelined statements trace no acquire or release.
// ConnConfig.OnNotice hears their notices, with the shared connection's
// PgConn, to be read likewise.
//
// MaxConns bounds both kinds together: the whole and the shared
// connections share it through an in-process budget (shoal.NewBudget),
// max-min fair by demand, and a kind that needs none for a while gives its
// connections back to the other. Two shared connections stay open (fewer
// when MaxConns leaves no room for them beside MinConns and one whole
// connection), so that a statement finds an idle one beside one busy with
// a slow statement, and another opens, in the background, as soon as
// every open one has a statement in flight (when idle whole connections
// hold the rest of MaxConns, as soon as there are more statements in
// flight than shared connections, one of them giving its place): a
// PostgreSQL backend runs one statement at a time, so a statement queued
// behind another waits for it, where an idle connection runs it at once. With more callers than shared
// connections open, quick statements fill a connection first (with no
// more, each caller has one to itself): a new one goes to the busiest
// shared connection whose
// statements in flight, itself included, would all be answered within
// Config.PipelineFill (pool_pipeline_fill, default 800µs) at the pace that
// connection has been answering, so that statements arriving together
// leave in fewer writes and come back in fewer reads; a connection whose
// oldest statement has been at the server longer than PipelineFill (a
// slow statement) takes none while another has room, and, while the pool
// may open another shared connection, none at all: the statement waits for
// the new connection or for any statement to be answered, whichever comes
// first. Otherwise callers
// spread over the connections and share them, up to Pipeline on each, once
// every connection MaxConns allows is busy. While the server has two
// statements of a connection in hand, new ones wait and go out together,
// in one write, once the answers that came are read; before it waits for
// more, the connection's reader lets the callers it has just answered run,
// so that their next statements join that write: a write is a system call,
// and one per statement cost as much as the server's work on a small one.
// MaxConns must be 2 or more and MinConns below MaxConns-1. With
// Pipeline, SetMaxConns(n) caps each kind at its half of n (the odd one
// to the whole connections), within which the two still share by demand,
// and the pool never grows past the MaxConns it was made with. With a Budget, the whole and the shared connections join it as two
// members (Name, and Name + "/pipelined") besides dividing MaxConns: each
// kind holds at most the smaller of its two shares and each dial takes a
// permit of both, so the pool stays within MaxConns and within the budget;
// no shared connection is then kept open for its own sake, and while the
// budget grants the shared connections nothing and none is open (the
// minimums fill it), statements go to whole connections.
//
// The read pool (Reads) pipelines too, on its standby or fallback
// connections, ReadMaxConns divided as MaxConns is (a ReadMaxConns of 1
// does not pipeline). Its shared sessions are read-only as its whole ones
// are; one made writable takes no more statements; every RoleCheckPeriod
// a statement's turn first asks the server for its role and lag, pipelined,
// so a standby promoted or past MaxStandbyLag stops taking reads; and a
// shared connection on a host the pool stopped using takes no new
// statements and closes once those on it are answered.
//
// Stat and the Observer describe the pool as a whole, shared connections
// included, as one pool of MaxConns connections: a shared connection with
// a statement in flight counts as acquired (AcquiredConns, the used
// connections of metrics), one with none as idle, and every pipelined
// statement is one acquire and one release (more when it goes to another
// shared connection than the first it was given), its time in flight the
// lease's use time. Stat().Pipelined() has the shared connections' figures apart,
// and Config.PipelineObserver sees them alone, as a pool named Name plus
// "/pipelined" whose leases are the statements in flight: with shoalprom,
// shoal_pool_leases over db_client_connection_count{state="used"} of that
// name (divided ignoring(state) in PromQL) is how many statements share a
// busy connection.
//
// Each caller's result is read whole into memory before it is handed over,
// so that a slow reader never holds up the connection: rows cost their
// size in memory at once (a million 100-byte rows are over 100 MB), and
// the statements behind a long result on its connection wait for all of
// it to arrive. Query what may be large, or slow, on an acquired Conn.
// Errors come where pgx puts them: one that keeps the statement from
// running (a syntax error) from Query (in QueryExecModeExec from the rows'
// Err, as pgx's), one it meets while running (a division by zero on its
// third row) from the rows' Err, after the rows sent before it. A
// caller whose context ends returns at once with its error; its statement,
// if already written, runs on and its answer is read and dropped (no
// cancel request is sent on a shared connection while a caller waits on
// it: it could cancel that caller's statement; once none does, what was
// given up on and has run CancelTimeout is cancelled, and Close cancels
// what is left, see CancelTimeout), and callers queued behind a slow statement wait
// for it unless their contexts end first. A connection that breaks fails
// the callers whose statements were on it, at once, and is replaced; a
// statement whose whole answer had come in by then gets its answer, as
// the server ran it, and one not yet written goes to another connection,
// as the server never saw it. A shared connection whose oldest statement
// was given up on and that has answered nothing for CancelTimeout takes no
// new statements; once no caller waits on a statement written to it, the
// server is asked to cancel what it runs (nothing more being written to it
// meanwhile), and the connection is closed and replaced if that
// is not answered within CancelTimeout either (a silent server: a firewall
// that lost its state, an address moved away), so that it gives its place
// in MaxConns back. A
// pipelined write refused as read-only resets the pool after a failover,
// as a whole connection's does.
//
// Query execution modes on shared connections: QueryExecModeCacheStatement
// (pgx's default) prepares each statement by name on each shared
// connection, beside its first unnamed run, and runs it by name after,
// ConnConfig.StatementCacheCapacity statements per connection at most (the
// others run unnamed); Exec runs unnamed, with arguments in text whose
// types the server infers, so a []byte goes as bytea (a text column stores
// its hex form, \x6869 for "hi"), as in pgx's QueryExecModeExec;
// CacheDescribe and DescribeExec run as Exec does, but for a statement
// with an argument whose Go type does not say its parameter's type (a
// []byte; a map or a struct for json; a time.Time outside UTC, which would
// go in UTC, so that a timestamp or date parameter read the UTC wall
// clock; a float32, which would go as its shortest decimal, where pgx
// widens it for float8; any other slice, which would go as an array, where
// pgx writes JSON for json; a time.Duration, which would go as an
// interval, where pgx writes its nanoseconds for bigint), which runs on a
// whole connection, where pgx describes it; SimpleProtocol goes to a whole
// connection. With
// CacheStatement, such a statement waits for its preparation on its first
// run on a connection, one round trip, so that each argument is encoded as
// its parameter's type, as pgx's default mode encodes it (not a time.Time
// in UTC: for a text parameter its first run writes it as a timestamp,
// 2024-01-02 23:04:05Z, where pgx and the runs after write its String
// form); past the cache's capacity it runs on a whole connection. An argument that pgx cannot
// encode as its parameter's type (an int for a text parameter), which pgx
// fails, runs where the statement runs unnamed, the server typing it from
// its text: on its first run on each shared connection, and on every run
// in CacheDescribe and DescribeExec; with CacheStatement every run after
// the first fails as in pgx. A mode whose cache is turned off
// (CacheStatement with StatementCacheCapacity 0, CacheDescribe with
// DescriptionCacheCapacity 0) goes to a whole connection, where pgx fails
// it, as it fails every statement in that mode.
// The Rows of a pipelined Query return nil from Conn, and a copy of the
// connection's type map from TypeMap. Closing them (which Next does after
// the last row, and QueryRow's Scan as it returns) hands the memory of the
// answer to the next statement: RawValues and *pgtype.DriverBytes stay
// valid until then, and QueryRow refuses *pgtype.DriverBytes as pgx's
// does; the command tag, the columns and the error stay readable.
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
