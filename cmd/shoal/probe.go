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
// experiment starts.
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
	return c.Close()
}
