package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A Ping the caller makes, through the pool or on an acquired Conn, checks
// that the server answers in time: when its context ends first it is cut
// off at the deadline, as pgx's default handler does, and not cancelled at
// the server and waited for, which on a silent server would hold the
// caller for CancelTimeout more.
func TestCallersPingIsCutOffAtItsDeadline(t *testing.T) {
	for _, via := range []string{"Pool.Ping", "Conn.Ping"} {
		t.Run(via, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakePG(t)
				p := fakePool(t, f, nil)
				ping := p.Ping
				if via == "Conn.Ping" {
					c, err := p.Acquire(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					defer c.Release()
					ping = c.Ping
				}
				f.silent.Store(true)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				defer cancel()
				start := time.Now()
				err := ping(ctx)
				if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took != 10*time.Millisecond {
					t.Errorf("%s on a silent server returned %v after %s, want context.DeadlineExceeded at the 10ms deadline", via, err, took)
				}
			})
		})
	}
}
