package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// probe dials the target's host:port once, so that an unreachable target
// fails within the dial timeout, saying which address and why, before any
// experiment starts. A PostgreSQL target is also logged into and asked
// SELECT 1: a server that accepts connections but never answers, a wrong
// password or a bad sslmode then fail here once, not in every case after a
// timeout of its own.
func probe(ctx context.Context, t *target, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", t.HostPort)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within --dial-timeout %s", timeout)
		}
		return fmt.Errorf("cannot reach %s (from --target %s): %w", t.HostPort, t.Redacted, err)
	}
	c.Close()
	if t.Kind == targetPostgres && pgConnectExec != nil {
		if err := pgConnectExec(ctx, t.Raw, "select 1"); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("no answer within --dial-timeout %s", timeout)
			}
			return fmt.Errorf("cannot use %s (from --target %s): %w", t.HostPort, t.Redacted, err)
		}
	}
	return nil
}
