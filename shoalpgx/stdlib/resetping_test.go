package stdlib_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A caller whose context ends while ResetSession pings the connection
// database/sql reuses gets its context's error at once, and the healthy
// connection is not lost: as in the pool's own acquire, the ping goes on
// without the caller, and the connection goes back to the pool (not to
// database/sql) when it answers, without the statements the driver
// prepared on it, or is closed when it does not. A ping run under the
// caller's context would have had pgx close the connection when the
// caller left, and a wave of cancellations would cost a dial each. A
// deadline that passes during the ping is a caller leaving as a cancel is.
func TestSQLResetSessionPingOutlivesTheCallersCancel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prepare  bool // a statement left prepared on the connection
		answer   bool // whether the ping answers
		deadline bool // the caller leaves at its deadline, not by a cancel
	}{
		{"answers", false, true, false},
		{"answers, with a statement prepared", true, true, false},
		{"fails", false, false, false},
		{"answers after the deadline", false, true, true},
		{"fails after the deadline", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hp *pgpair.Proxy
			p := newTestPool(t, func(c *shoalpgx.Config) {
				c.MaxConns = 1
				c.HealthCheckAfter = time.Millisecond
				c.Logger = slog.New(slog.DiscardHandler) // the failed ping's Warn
				hp = proxyConfig(t, c)
			})
			db := newTestDB(t, p)
			t.Cleanup(func() { hp.Close() }) // after the DB's cleanup, before the pool's
			db.SetMaxIdleConns(1)
			if tc.prepare {
				stmt, err := db.PrepareContext(pgtest.Ctx(t), "select 1")
				if err != nil {
					t.Fatal(err)
				}
				defer stmt.Close()
			}
			warm := sqlBackendPID(t, db)
			if s := db.Stats(); s.Idle != 1 {
				t.Fatalf("db.Stats %+v: want the connection idle in database/sql", s)
			}
			time.Sleep(10 * time.Millisecond) // idle past HealthCheckAfter

			hp.Hold()
			if tc.deadline {
				ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 300*time.Millisecond)
				defer cancel()
				_, err := db.ExecContext(ctx, "select 1")
				select {
				case <-hp.Held(): // ResetSession's ping waited at the proxy
				default:
					t.Fatalf("ExecContext returned %v before ResetSession's ping reached the proxy: the deadline came too soon for this machine", err)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("ExecContext: %v, want context.DeadlineExceeded", err)
				}
			} else {
				ctx, cancel := context.WithCancel(pgtest.Ctx(t))
				defer cancel()
				go func() {
					<-hp.Held() // ResetSession's ping waits at the proxy
					cancel()
				}()
				if _, err := db.ExecContext(ctx, "select 1"); !errors.Is(err, context.Canceled) {
					t.Fatalf("ExecContext: %v, want context.Canceled", err)
				}
			}
			if s := db.Stats(); s.OpenConnections != 0 {
				t.Fatalf("db.Stats %+v: database/sql should have let the connection go", s)
			}
			if !tc.answer {
				hp.Cut()
			}
			hp.Release()
			pgtest.WaitFor(t, 10*time.Second, "the pinged connection out of use", func() bool { return p.Stat().Shoal().InUseConns == 0 })
			pgtest.Settle(t, shoalStats(p))
			if !tc.answer {
				if s := p.Stat().Shoal(); s.Closed != 1 || s.IdleConns != 0 {
					t.Fatalf("stats %+v: want the connection whose ping failed closed", s)
				}
				if got := sqlBackendPID(t, db); got == warm {
					t.Fatalf("next query ran on backend %d, whose ping failed", got)
				}
				return
			}
			if s := p.Stat().Shoal(); s.Closed != 0 || s.IdleConns != 1 {
				t.Fatalf("stats %+v: want the healthy connection back in the pool, none closed", s)
			}
			wantNoDriverStatements(t, p)
			db.SetMaxIdleConns(0) // the next query's connection from the pool
			if got := sqlBackendPID(t, db); got != warm {
				t.Fatalf("next query ran on backend %d, want the healthy one (%d) the cancelled caller's ping kept", got, warm)
			}
		})
	}
}
