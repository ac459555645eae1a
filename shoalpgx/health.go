package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/shoalpool/shoal/internal/peek"
)

// peekAfter is the idleness after which an acquire looks at a connection's
// socket before handing it out. Under load connections are idle for
// microseconds (and hand-offs skip the check), so the look costs nothing
// there; after a quiet millisecond it costs one non-blocking recv.
const peekAfter = time.Millisecond

// Why an idle connection failed its look.
var (
	errIdleClosed = errors.New("the server closed the idle connection")
	errIdleFatal  = errors.New("the server sent an error on the idle connection (terminated, or shutting down)")
)

// initPeek prepares the idle check for a new connection.
func (pc *pooledConn) initPeek() {
	nc := pc.conn.PgConn().Conn()
	if tc, ok := nc.(*tls.Conn); ok {
		nc, pc.isTLS = tc.NetConn(), true
	}
	pc.peek.Init(nc)
	pc.releasedAt = time.Now()
}

// idleCheck looks at an idle connection's socket without a round trip. A
// server that terminated the backend (pg_terminate_backend, a restart, an
// idle timeout) sends an ErrorResponse, 'E', and closes: either shows here.
// Other messages a server may send unasked (notices, notifications,
// parameter changes) are left for pgx to read with the next query. Over TLS
// the bytes cannot be read without decrypting, so only a close counts.
func (pc *pooledConn) idleCheck() error {
	switch res, first := pc.peek.Peek(); res {
	case peek.Closed:
		return errIdleClosed
	case peek.Data:
		if !pc.isTLS && first == 'E' {
			return errIdleFatal
		}
	}
	return nil
}

// healthCheck is the core's health check, run on acquire for a connection
// idle at least peekAfter: the look at its socket, then, once it has been
// idle HealthCheckAfter, a ping.
func (p *Pool) healthCheck(ctx context.Context, pc *pooledConn) error {
	if err := pc.idleCheck(); err != nil {
		return err
	}
	if time.Since(pc.releasedAt) < p.config.HealthCheckAfter {
		return nil
	}
	return p.ping(ctx, pc)
}
