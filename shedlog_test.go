package shoal

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"
)

// TestSheddingOffLogsNoMadeUpWait guards the "load shedding off" line of a
// pool whose queue emptied with no acquire in the interval: it must not
// report the pool's age as the shortest wait.
func TestSheddingOffLogsNoMadeUpWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf syncbuf.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 1, QueueTarget: 10 * time.Millisecond, QueueInterval: 100 * time.Millisecond, Logger: logger,
		})
		time.Sleep(time.Hour) // the pool's age, which no wait comes near
		held := mustAcquire(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := p.Acquire(ctx); err == nil {
			t.Fatal("the waiter was not shed")
		}
		time.Sleep(time.Second) // intervals with no acquire and nobody waiting
		synctest.Wait()
		held.Release()
		out := buf.String()
		i := strings.Index(out, "load shedding off")
		if !strings.Contains(out, "load shedding on") || i < 0 {
			t.Fatalf("shedding did not go on and off:\n%s", out)
		}
		line, _, _ := strings.Cut(out[i:], "\n")
		if strings.Contains(line, "h0m") || strings.Contains(line, "1h") {
			t.Fatalf("the off line reports the pool's age as a wait: %s", line)
		}
	})
}
