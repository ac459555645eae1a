package shoalpgx

import (
	"context"
	"errors"
)

// A shared connection with nothing in flight has nobody reading it: the
// reader stops once every answer is in (pipeline_read.go). So a server
// that ends the session meanwhile (pg_terminate_backend, a restart,
// idle_session_timeout) leaves its fatal error and its close unread, and a
// statement written after them would fail with that error although it
// never ran. The shared connections' core pool therefore checks, as the
// whole connections' does (health.go), a connection that has carried no
// statement for peekAfter before it takes the next: one non-blocking recv
// on its socket. One the server closed fails the check, and the core
// closes it and gives the statement another. Over TLS the waiting bytes
// cannot be read without reading them, so any bytes waiting on an idle
// shared connection fail it too: a server says nothing unasked to a
// session that runs no LISTEN but a rare parameter change, which costs one
// dial. HealthCheckAfter 0 turns the check off, as it does for whole
// connections.

// idleCheck is the shared connections' core HealthCheck: an error when the
// socket of c, idle, shows that the server ended the session, or holds
// bytes that TLS keeps unread.
func (pp *pipePool) idleCheck(_ context.Context, c *pipeConn) error {
	mustPing, err := c.pc.idleCheck()
	if mustPing {
		err = errIdleUnread
	}
	return err
}

// errIdleUnread fails an idle shared TLS connection with bytes waiting.
var errIdleUnread = errors.New("bytes waiting unasked on the idle TLS connection")
