package shoalgrpc

import (
	"context"
	"errors"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/ctxwait"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// waitForReadyRetry is how long a grpc.WaitForReady call waits before it
// asks the pool again after a failed dial; the pool's own backoff paces the
// dials themselves.
const waitForReadyRetry = 25 * time.Millisecond

// waitsForReady reports whether the call options ask for grpc.WaitForReady.
func waitsForReady(opts []grpc.CallOption) bool {
	wait := false
	for _, o := range opts {
		if ff, ok := o.(grpc.FailFastCallOption); ok {
			wait = !ff.FailFast // the last one given wins, as in grpc-go
		}
	}
	return wait
}

// acquire takes a stream slot on the least-loaded connection that can carry
// a call now.
//
// The core pool picks the least-loaded connection with a free slot but
// knows nothing of gRPC connectivity, so the state is checked here, after
// the pick. A connection in TRANSIENT_FAILURE is retired (no new calls;
// it closes when its calls end) when another connection is READY, and the
// pick is repeated; with no ready connection anywhere it is used anyway,
// so the call fails fast with grpc-go's own error, or waits for the
// reconnection when it asked for grpc.WaitForReady. A SHUTDOWN connection
// (closed under the pool) is discarded. Each retry takes a connection out
// of the running, so the loop ends within MaxConns+1 picks.
func (p *Pool) acquire(ctx context.Context, opts []grpc.CallOption) (shoal.Lease[*conn], error) {
	waitForReady := waitsForReady(opts)
	var start time.Time // of a WaitForReady call's wait, for its error
	if waitForReady {
		start = time.Now()
	}
	for {
		l, err := p.pool.Acquire(ctx)
		if err != nil {
			if waitForReady && errors.Is(err, shoal.ErrDial) && ctx.Err() == nil {
				// grpc.WaitForReady: a call that would fail because the
				// server is down waits for it instead, until its context
				// ends, as on a grpc.ClientConn.
				if ctxwait.Sleep(ctx, waitForReadyRetry) {
					continue
				}
				err = readyWaitError(ctx, err, time.Since(start))
			}
			return shoal.Lease[*conn]{}, acquireError(err)
		}
		c := l.Value()
		if n := c.serverLimit.Load(); n != 0 && n != c.appliedLimit.Load() {
			// The first call on a new transport applies the limit its
			// server advertised.
			c.appliedLimit.Store(n)
			l.SetStreamLimit(int(n))
		}
		switch c.cc.GetState() {
		case connectivity.TransientFailure:
			if p.anotherReady(c) {
				l.Retire()
				l.Release()
				continue
			}
		case connectivity.Shutdown:
			l.Discard()
			continue
		}
		return l, nil
	}
}

// anotherReady reports whether an open connection other than c is READY.
func (p *Pool) anotherReady(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for other := range p.conns {
		if other != c && other.cc.GetState() == connectivity.Ready {
			return true
		}
	}
	return false
}
