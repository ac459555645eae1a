package main

import (
	"context"
	"net"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// interruptingProxy listens on loopback and passes its first pass
// connections through to upstream. Of the later ones, a connection closed
// before its client wrote (the probe's dial) is let go; the first whose
// client writes is held open without a word, and cancel called, as
// Ctrl-C pressed while shoal waits for the server's answer. Cancelled
// only once the client has written, the dial is done by then: a Ctrl-C
// during the dial would end it, and not test the wait for an answer. It
// returns the proxy's address.
func interruptingProxy(t *testing.T, upstream string, pass int32, cancel context.CancelFunc) string {
	t.Helper()
	var n atomic.Int32
	held := make(chan struct{})
	addr := serveLoopback(t, func(c net.Conn) {
		if n.Add(1) <= pass {
			passThrough(c, upstream)
			return
		}
		if _, err := c.Read(make([]byte, 1)); err != nil {
			return // closed unused
		}
		cancel()
		<-held
	})
	t.Cleanup(func() { close(held) }) // before serveLoopback's, which waits for the held
	return addr
}

// TestInterruptedBeforeTheRun: Ctrl-C while shoal waits for the target's
// first answer (the probe's login) or for the sweep's preflight query
// ends the run at once with status 130 and says it was interrupted, rather
// than failing with status 1 and blaming a --dial-timeout that never ran
// out, or waiting for it (an hour here: the test would time out).
func TestInterruptedBeforeTheRun(t *testing.T) {
	u, err := url.Parse(postgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmd  string
		pass int32 // connections passed through before the one held
	}{
		// The probe's dial is closed unused; its login is held.
		{"bench probe", "bench", 0},
		{"sweep probe", "sweep", 0},
		// The probe's dial and login pass; the preflight's login is held.
		{"sweep preflight", "sweep", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pu := *u
			pu.Host = interruptingProxy(t, u.Host, tc.pass, cancel)
			r := runShoalCtx(t, ctx, append([]string{tc.cmd, "--target", pu.String(), "--dial-timeout", "1h"}, testTimes...)...)
			r.wantCode(t, exitInterrupted)
			if !strings.Contains(r.stderr, "interrupted") || strings.Contains(r.stderr, "--dial-timeout") {
				t.Errorf("stderr does not say it was interrupted, or blames the timeout:\n%s", r.stderr)
			}
		})
	}
}
