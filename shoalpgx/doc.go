// Package shoalpgx is a PostgreSQL connection pool for pgx v5, built on the
// shoal core pool and shaped like pgxpool, so that for most programs
// switching is a change of import path (see "What it keeps from pgxpool"
// for what it does not have):
//
//	pool, err := shoalpgx.New(ctx, "postgres://app@db.internal/app?pool_max_conns=16")
//	if err != nil { ... }
//	defer pool.Close()
//	var n int
//	err = pool.QueryRow(ctx, "select count(*) from users").Scan(&n)
//
// # What it keeps from pgxpool
//
// The method set (Acquire, AcquireFunc, AcquireAllIdle, Exec, Query,
// QueryRow, SendBatch, CopyFrom, Begin, BeginTx, Ping, Reset, Stat, Close),
// the Config field
// names and types where pgxpool has them (ConnConfig, MaxConns, MinConns,
// MinIdleConns, MaxConnLifetime, MaxConnLifetimeJitter, MaxConnIdleTime,
// HealthCheckPeriod, PingTimeout), the hooks (BeforeConnect, AfterConnect,
// BeforeAcquire, AfterRelease, BeforeClose) and the pool_ keys of the
// connection string. Stat returns this package's Stat, with pgxpool.Stat's
// methods; Stats returns shoal's fuller snapshot. Config.ConnString hands
// back the connection string with its password, exactly as the caller's
// own string has it (Config.String redacts it).
// Log a Config, never its ConnString or ConnConfig: pgx's ConnConfig
// prints the password.
//
// # What it does differently
//
//   - Checkout goes through shoal's partitioned lock-free idle stacks and a
//     first-come, first-served queue with bounded barging (HandoffAfter,
//     4ms by default): a released connection goes to whoever asks next,
//     usually its releaser coming back, until the oldest waiter has waited
//     4ms (up to 16ms when more than 8 callers wait per connection), and
//     to the waiters in order after that. That keeps throughput
//     close to that of dedicated connections when goroutines outnumber
//     connections; pool_handoff_after=0 gives strict FIFO hand-off.
//   - A connection is never handed out again in a state a new holder would
//     not expect. On release it is checked: idle and ready goes back to the
//     pool; released by its holder inside a transaction, it is closed, as in
//     pgxpool, so that a Tx still held cannot touch the next holder's
//     session (one the pool's own Begin or SendBatch left in a transaction
//     is rolled back in the background first, and closed if that fails);
//     busy (unread rows, a batch not closed) or closed by pgx is closed.
//   - Dials run in the background, at most MaxDialing at a time, with a
//     backoff while the server is down, and a failed dial's error reaches the
//     waiting callers at once instead of at their deadline.
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
//   - pgx closes a connection whose query is still running when its context
//     ends (it cannot know where the protocol stands); the pool then
//     replaces it. Deadlines much tighter than the queries' real duration
//     therefore cost a reconnect each. pgx can send a cancel request
//     instead: see pgconn.Config.BuildContextWatcherHandler.
//   - A connection the server killed while it sat idle is replaced by the
//     next acquire, not handed out: after a millisecond of idleness an
//     acquire looks at the socket (a close, or PostgreSQL's fatal error
//     message, shows there without a round trip), and after
//     HealthCheckAfter (1s) it pings. Over TLS the server's goodbye is an
//     encrypted record, so anything waiting there sends the acquire to the
//     ping at once. A connection killed while a query runs on it fails that
//     query, and only that one.
//   - Session state (SET, prepared statements, temporary tables outside a
//     transaction) stays with the connection, as in pgxpool.
//   - Close waits for every acquired connection to be released.
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
