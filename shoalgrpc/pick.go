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

// readyPause is the wait between a WaitForReady call's tries. It is a
// variable so that a test can end a pause after the call's deadline, as a
// loaded machine does when the call's goroutine runs late.
var readyPause = ctxwait.Sleep

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
	refused := false // the pool turned the WaitForReady call away for a failed dial
	for {
		l, err := p.pool.Acquire(ctx)
		if err != nil {
			dialFailed := errors.Is(err, shoal.ErrDial)
			if waitForReady && dialFailed {
				refused = true
				// grpc.WaitForReady: a call that would fail because the
				// server is down waits for it instead, until its context
				// ends, as on a grpc.ClientConn.
				if ctx.Err() == nil && readyPause(ctx, waitForReadyRetry) {
					continue
				}
			}
			if refused && ctx.Err() != nil && (dialFailed || errors.Is(err, ctx.Err())) {
				// The context ended while the call waited for the server:
				// the pause, the next try or the refusal itself may see it
				// first, and the error is the same whichever did.
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
