package shoal

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/shoalpool/shoal/internal/syncbuf"
)

// Config.Close that fails or panics is logged (Warn, with its error) and
// otherwise ignored: the connection counts as closed and its place is free.
func TestCloseThatFailsIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncbuf.Buffer
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Close: func(c *fakeConn) error {
				if c.id == 1 {
					return errors.New("broken pipe on close")
				}
				panic("close exploded")
			}})
		mustAcquire(t, p).Discard()
		synctest.Wait()
		mustAcquire(t, p).Discard() // within MaxConns 1: the first close freed its place
		synctest.Wait()
		out := logs.String()
		for _, want := range []string{"broken pipe on close", "Close panicked: close exploded"} {
			if !strings.Contains(out, "shoal: close failed") || !strings.Contains(out, want) || !strings.Contains(out, "pool=") {
				t.Errorf("log %q, want a \"close failed\" line with %q and the pool's name", out, want)
			}
		}
		if s := p.Stats(); s.TotalConns != 0 || s.Closed != 2 {
			t.Errorf("after two failed closes: %d open, %d closed; want 0, 2", s.TotalConns, s.Closed)
		}
	})
}
