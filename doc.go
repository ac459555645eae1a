// Package shoal is a generic connection pool for Go.
//
// A [Pool] hands out [Lease]s on connections of any type T: exclusive ones
// (a SQL session, a Redis connection: one lease at a time) or multiplexed
// ones (an HTTP/2 or gRPC connection: up to Config.MaxStreams leases at a
// time, the least-loaded connection first).
//
//	pool, err := shoal.New(shoal.Config[net.Conn]{
//		Dial:     func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) },
//		MaxConns: 8,
//	})
//	...
//	lease, err := pool.Acquire(ctx)
//	if err != nil { ... } // an *AcquireError: why, and what it waited for
//	defer lease.Release()
//	use(lease.Value())
//
// Checkout takes no lock and allocates nothing: idle connections live on
// lock-free stacks in partitions, and a caller steals from another
// partition before it waits. Waiters are served first come, first served
// (Config.BargeWindow trades some of that order for throughput). Dials run
// in the background, bounded, and a server that is down is said at once
// (Config.Dial). Closes run in the background too, and a connection counts
// against MaxConns until its Close returns. Lifetimes with jitter, idle
// reaping, floors kept warm, health checks, hooks, load shedding and leak
// reports are in [Config].
//
// What adapters and budgets plug into: [Budget], [BudgetMember] and
// [BudgetPermit] share a limit between pools (shoaletcd keeps one in etcd),
// and a Dial finds its permit with [PermitFromContext]; an [Observer] may
// also be a [StatsAttacher] or a [WaitTracer] (shoalprom, shoalotel,
// shoaldebug); [HostStat] is what a pool of several servers reports of each;
// [Lease.DiscardFor], [Pool.TryAcquireIdle] and [IdleFor] serve an adapter's
// own checks (shoalpgx's).
//
// The adapters build on this package: shoalpgx (PostgreSQL on pgx),
// shoalhttp (an http.RoundTripper), shoalgrpc (a grpc.ClientConnInterface).
// It imports only the standard library.
package shoal
