package main

import (
	"context"
	"net"
	"strings"
	"testing"
)

// silentAfterRequest listens on loopback and, on the first connection
// whose client sends anything, calls cancel, as Ctrl-C pressed while
// shoal waits for the server's answer, and then says nothing. Cancelled
// only once the client has written, the dial is done by then: a Ctrl-C
// during the dial would end it, and not test the wait for an answer.
func silentAfterRequest(t *testing.T, cancel context.CancelFunc) string {
	t.Helper()
	held := make(chan struct{})
	addr := serveLoopback(t, func(c net.Conn) {
		if _, err := c.Read(make([]byte, 1)); err != nil {
			return // the probe's first connection, closed unused
		}
		cancel()
		<-held
	})
	t.Cleanup(func() { close(held) }) // before serveLoopback's, which waits for the held
	return addr
}

// TestInterruptedProbeOfASilentServer: Ctrl-C while the probe waits for
// the answer of a server that accepted its request and says nothing ends
// the run at once with status 130, whatever the target's protocol, rather
// than when --dial-timeout runs out (an hour here: the test would time
// out).
func TestInterruptedProbeOfASilentServer(t *testing.T) {
	for _, scheme := range []string{"grpc", "http", "clickhouse+http", "influxdb+http"} {
		t.Run(scheme, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr := silentAfterRequest(t, cancel)
			r := runShoalCtx(t, ctx, append([]string{"bench", "--target", scheme + "://" + addr, "--dial-timeout", "1h"}, benchTimes...)...)
			r.wantCode(t, exitInterrupted)
			if !strings.Contains(r.stderr, "interrupted before anything was measured") {
				t.Errorf("stderr does not say it was interrupted:\n%s", r.stderr)
			}
		})
	}
}
