package warmup

import "context"

// PgxConn is a connection a pgx pool hands out: shoalpgx's and pgxpool's
// both have these methods.
type PgxConn interface {
	Release()
	Ping(ctx context.Context) error
}

// Pinged is Hold for a pool whose Acquire hands out connections that ping:
// it holds n of them at once, pings each while all are held, and gives
// them back. Pass the pool's Acquire method.
func Pinged[C PgxConn](ctx context.Context, n int, acquire func(context.Context) (C, error)) error {
	return Hold(ctx, n, func(ctx context.Context) (func(), error) {
		c, err := acquire(ctx)
		if err != nil {
			return nil, err
		}
		return c.Release, c.Ping(ctx)
	})
}
