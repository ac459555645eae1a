package shoal

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSheddingOffLogsNoMadeUpWait guards the "load shedding off" line of a
// pool whose queue emptied with no acquire in the interval: it must not
// report the pool's age as the shortest wait.
func TestSheddingOffLogsNoMadeUpWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf lockedBuffer
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
