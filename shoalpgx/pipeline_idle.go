package shoalpgx

import (
	"errors"
	"fmt"
)

// A shared connection with nothing in flight has nobody reading it: the
// reader stops once every answer is in (pipeline_read.go). So a server
// that ends the session meanwhile (pg_terminate_backend, a restart,
// idle_session_timeout) leaves its fatal error and its close unread, and a
// request written after them would fail with that error although it never
// ran. Before a request goes on a connection idle since peekAfter, the
// pool looks at its socket as an acquire looks at a whole connection's
// (health.go): one non-blocking recv. A connection the server closed
// breaks there, and the request goes to another (pipePool.run). Over TLS
// the waiting bytes cannot be read without reading them, so any bytes
// waiting on an idle shared connection close it: a server says nothing
// unasked to a session that runs no LISTEN but a rare parameter change,
// which costs one dial. HealthCheckAfter 0 turns the look off, as it does
// for whole connections.

// lookWhileIdleLocked breaks c when its socket shows that the server
// ended the session while c sat idle. c.mu must be held and nothing be
// pending.
func (c *pipeConn) lookWhileIdleLocked() {
	if c.err != nil || c.reader != readerNone || c.writing || c.pc.pool.config.HealthCheckAfter == 0 {
		return
	}
	// The last answer read (the reader's, who has let c.mu go since: no
	// one reads with nothing pending) says how long c has been idle.
	if pipeClock()-c.pace.lastAt < int64(peekAfter) {
		return // busy a moment ago: the look would cost more than it finds
	}
	mustPing, err := c.pc.idleCheck()
	if mustPing {
		err = errIdleUnread
	}
	if err != nil {
		c.failLocked(fmt.Errorf("shoalpgx: shared connection: %w", err))
	}
}

// errIdleUnread closes an idle shared TLS connection with bytes waiting.
var errIdleUnread = errors.New("bytes waiting unasked on the idle TLS connection")
