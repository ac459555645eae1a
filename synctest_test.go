package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// Under testing/synctest the clock stands still until every goroutine is
// blocked, so a connection can be released at the very instant the pool was
// made. It must still count as idle from then: reaped after MaxIdleTime and
// checked after HealthCheckAfter.
func TestIdleClockUnderSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		checked := 0
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{
			MaxConns: 2, Dial: d.dial, Close: d.close,
			MaxIdleTime: time.Minute,
			HealthCheck: func(context.Context, *fakeConn) error {
				checked++
				return nil
			},
			HealthCheckAfter: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		a.Release()
		b.Release()
		time.Sleep(2 * time.Second)
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if checked != 1 {
			t.Fatalf("%d health checks after 2s idle, want 1", checked)
		}
		l.Release()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 0 || d.closes.Load() != 2 {
			t.Fatalf("after 2 minutes idle: %+v, %d closed; want both reaped", s, d.closes.Load())
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
