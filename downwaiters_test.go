package shoal

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A caller that queued while a connection was still up, as the server went
// down, is served by that connection's release or by nothing: when the
// connection breaks instead, with dials failing, the caller gets the dial's
// error at once, as a caller arriving then would, not after the next probe
// of a server whose connects hang.
func TestLastConnectionGoneFailsWaitersWhenServerDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const dialTimeout = 250 * time.Millisecond
		srv := &flakyServer{silent: true, downErr: errBoom}
		p, err := New(Config[*flakyConn]{Dial: srv.dial, MaxConns: 2, DialTimeout: dialTimeout})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		held, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		srv.setDown(true)

		// The waiter's dial hangs until DialTimeout and fails: the server
		// counts as down, but the held connection may still come back.
		type result struct {
			err  error
			when time.Time
		}
		done := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := p.Acquire(ctx)
			if err == nil {
				l.Release()
			}
			done <- result{err, time.Now()}
		}()
		time.Sleep(dialTimeout + time.Millisecond)
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("the waiter returned (%v) while a connection was up to serve it", r.err)
		default:
		}
		if s := p.Stats(); s.DialErrors != 1 {
			t.Fatalf("%d dial errors, want the waiter's one dial failed", s.DialErrors)
		}

		broke := time.Now()
		held.Discard()
		r := <-done
		if !errors.Is(r.err, ErrDial) || !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("the waiter got %v, want the failed dial's error", r.err)
		}
		if took := r.when.Sub(broke); took != 0 {
			t.Fatalf("the waiter failed %s after the last connection broke, want at once", took)
		}
	})
}
