package shoal_test

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/leaktest"
)

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// leakyAcquirer stands for user code that acquires and forgets to release.
//
//go:noinline
func leakyAcquirer(t *testing.T, p *shoal.Pool[int]) shoal.Lease[int] {
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLeakReportedOnceWithTheAcquirer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		obs := &leaktest.Recorder{}
		const threshold = 20 * time.Millisecond
		p, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 2, LeakThreshold: threshold, Observer: obs, Logger: logger,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		l := leakyAcquirer(t, p)
		time.Sleep(2 * threshold) // past LeakThreshold and a maintenance tick
		synctest.Wait()
		if n := p.Stats().Leaked; n != 1 {
			t.Fatalf("Leaked = %d with a lease held past LeakThreshold, want 1", n)
		}
		time.Sleep(3 * threshold) // a few more scans: still reported once
		synctest.Wait()
		if n := p.Stats().Leaked; n != 1 {
			t.Fatalf("Leaked = %d after more scans of the same lease, want 1", n)
		}
		r := obs.Reports()[0]
		if !strings.HasSuffix(r.Function, ".leakyAcquirer") || !strings.Contains(r.Stack, "leakyAcquirer") {
			t.Fatalf("report names %q; stack:\n%s", r.Function, r.Stack)
		}
		if strings.Contains(r.Stack, "github.com/shoalpool/shoal.(*Pool") {
			t.Fatalf("stack shows pool internals:\n%s", r.Stack)
		}
		if r.Held < threshold || r.Reclaimed {
			t.Fatalf("report %+v", r)
		}
		logMu.Lock()
		out := logs.String()
		logMu.Unlock()
		if !strings.Contains(out, "lease held past LeakThreshold") || !strings.Contains(out, "leakyAcquirer") {
			t.Fatalf("log lacks the leak: %s", out)
		}
		// The attribute docs/operating.md tells operators to filter on.
		if !strings.Contains(out, "acquired_by="+r.Function) {
			t.Fatalf("the leak's log line has no acquired_by=%s: %s", r.Function, out)
		}
		// And the stack that took the lease, as the page says.
		if !strings.Contains(out, "stack=") || !strings.Contains(out, strconv.Quote(r.Stack)) {
			t.Fatalf("the leak's log line has not the stack that took the lease: %s", out)
		}
		l.Release() // not reclaimed: release works as usual
		if s := p.Stats(); s.IdleConns != 1 {
			t.Fatalf("stats %+v", s)
		}
		// A new hand-out of the same connection is judged afresh.
		l = leakyAcquirer(t, p)
		time.Sleep(2 * threshold)
		synctest.Wait()
		if n := p.Stats().Leaked; n != 2 {
			t.Fatalf("Leaked = %d after a second hand-out was held past LeakThreshold, want 2", n)
		}
		l.Release()
	})
}
