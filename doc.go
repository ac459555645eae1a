// Package shoal is a generic connection pool for Go.
//
// A [Pool] hands out [Lease]s on connections of any type T. The same pool
// serves exclusive connections (a SQL session, a Redis connection: one lease
// at a time) and multiplexed ones (an HTTP/2 or gRPC connection: up to
// MaxStreams leases at a time), because each connection simply has a number
// of stream slots.
//
// # What it does for you
//
//   - Checkout is cheap and allocation-free: idle exclusive connections live
//     on lock-free stacks split into partitions, so goroutines on different
//     cores rarely touch the same cache line. A caller whose home partition is
//     empty steals from the others before it dials or waits.
//   - Waiting is first-come, first-served: a released connection goes straight
//     to the oldest waiter. A waiter whose context ends gets an error that
//     matches ctx.Err() with errors.Is, and the connection it would have had
//     goes to the next waiter. Config.BargeWindow trades a bounded amount
//     of that order for throughput when callers outnumber connections: a
//     newcomer may take a released connection until the oldest waiter has
//     waited that long.
//   - Dials are bounded and run in the background. When a dial fails and no
//     open connection or other dial can serve the waiting callers, those
//     whose deadlines come before the next try get the dial's error at
//     once, and the rest wait for that try; once dials have failed for a
//     second the server counts as down and every caller gets the error at
//     once instead of sitting until its deadline. A pool whose server is
//     down backs off instead of storming it.
//   - Closes run in the background: a Close that waits on a stalled network
//     never holds up the Release, Discard or Acquire that let the
//     connection go, and the connection counts against MaxConns until its
//     Close returns.
//   - The lifecycle is complete: MaxLifetime with a jitter drawn per
//     connection, idle reaping, MinIdle and MinConns kept warm in the background, health
//     checks after idleness, hooks, load shedding and a bounded wait queue.
//
// # Using it
//
// A pool needs a Dial function and MaxConns:
//
//	pool, err := shoal.New(shoal.Config[net.Conn]{
//		Dial:     func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) },
//		Close:    net.Conn.Close,
//		MaxConns: 8,
//	})
//	...
//	lease, err := pool.Acquire(ctx)
//	if err != nil { ... }
//	defer lease.Release()
//	use(lease.Value())
//
// [Pool.Do] wraps the acquire, the call and the release, and discards the
// connection when the call panics or returns an error that Config.Broken
// reports as fatal.
//
// Adapters for PostgreSQL (shoalpgx), HTTP (shoalhttp) and gRPC (shoalgrpc)
// build on this package; it imports only the standard library.
package shoal
