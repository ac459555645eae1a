package shoal

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// syncBuffer is a bytes.Buffer that a pool's goroutines may log into while
// the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Config.Close that fails or panics is logged (Warn, with its error) and
// otherwise ignored: the connection counts as closed and its place is free.
func TestCloseThatFailsIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
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
