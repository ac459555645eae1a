package shoalpgx

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A ShouldPing that panics closes its connection before the panic goes on
// to the caller, as PrepareConn's does (TestPrepareConnPanicClosesTheConnection);
// an AfterRelease that panics closes its connection, and Release returns
// (docs/from-pgxpool.md: in pgxpool both crash the program). Either way
// the next acquire gets another backend.
func TestShouldPingAndAfterReleasePanicsCloseTheConnection(t *testing.T) {
	for _, hook := range []string{"ShouldPing", "AfterRelease"} {
		t.Run(hook, func(t *testing.T) {
			var panicNext atomic.Bool
			once := func() {
				if panicNext.Swap(false) {
					panic("the hook broke")
				}
			}
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 1
				if hook == "ShouldPing" {
					c.ShouldPing = func(context.Context, ShouldPingParams) bool { once(); return false }
				} else {
					c.AfterRelease = func(*pgx.Conn) bool { once(); return true }
				}
			})
			warm := warmPID(t, p)
			panicNext.Store(true)
			if hook == "ShouldPing" {
				func() {
					defer func() {
						if r := recover(); r != "the hook broke" {
							t.Fatalf("recovered %v, want ShouldPing's panic", r)
						}
					}()
					_, _ = p.Acquire(pgtest.Ctx(t))
					t.Fatal("Acquire returned; ShouldPing's panic was swallowed")
				}()
			} else {
				c, err := p.Acquire(pgtest.Ctx(t))
				if err != nil {
					t.Fatal(err)
				}
				c.Release() // panics in AfterRelease, which the pool takes
			}
			pgtest.WaitFor(t, 10*time.Second, "the connection closed", func() bool { return p.Stat().Shoal().Closed == 1 })
			if s := p.Stat().Shoal(); s.InUseConns != 0 {
				t.Fatalf("stats %+v: want none held", s)
			}
			if got := warmPID(t, p); got == warm {
				t.Fatalf("the connection whose %s panicked (%d) was handed out again", hook, warm)
			}
		})
	}
}
