package shoalpgx

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A connect hook that panics fails its dial with an error that names the
// hook, as an AfterConnect error names AfterConnect: the caller has no
// "Dial" of its own to look for.
func TestConnectHookPanicNamesTheHook(t *testing.T) {
	for _, hook := range []string{"BeforeConnect", "AfterConnect"} {
		t.Run(hook, func(t *testing.T) {
			var panicked atomic.Bool
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 1
				once := func() {
					if panicked.CompareAndSwap(false, true) {
						panic("the hook broke")
					}
				}
				if hook == "BeforeConnect" {
					c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { once(); return nil }
				} else {
					c.AfterConnect = func(context.Context, *pgx.Conn) error { once(); return nil }
				}
			})
			ctx := pgtest.Ctx(t)
			err := p.Ping(ctx)
			if err == nil || !strings.Contains(err.Error(), hook+" panicked: the hook broke") {
				t.Fatalf("Ping on the dial whose %s panicked: %v, want an error naming %s and the panic", hook, err, hook)
			}
			eventually(t, 10*time.Second, "a Ping served by the next dial", func() bool { return p.Ping(ctx) == nil })
		})
	}
}

// A BeforeClose that panics is logged under its own name, and the
// connection is closed all the same.
func TestBeforeClosePanicIsLoggedAsBeforeClose(t *testing.T) {
	var logs syncbuf.Buffer
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c.BeforeClose = func(*pgx.Conn) { panic("the hook broke") }
	})
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, c)
	_ = c.Conn().Close(ctx) // closed under the pool, which closes its side on Release
	c.Release()
	eventually(t, 10*time.Second, "the connection closed", func() bool { return p.Stat().TotalConns() == 0 })
	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if backendPID(t, c) == pid {
		t.Error("the closed connection was handed out again")
	}
	c.Release()
	if out := logs.String(); !strings.Contains(out, "BeforeClose panicked") || !strings.Contains(out, "the hook broke") {
		t.Errorf("log %q, want a line naming BeforeClose and the panic", out)
	}
}
