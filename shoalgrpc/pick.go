package shoalgrpc

import (
	"context"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc/connectivity"
)

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
func (p *Pool) acquire(ctx context.Context) (shoal.Lease[*conn], error) {
	for {
		l, err := p.pool.Acquire(ctx)
		if err != nil {
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
