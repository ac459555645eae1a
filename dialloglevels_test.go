package shoal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// levelLog keeps "LEVEL message" for each line logged to it.
type levelLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *levelLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *levelLog) WithGroup(string) slog.Handler            { return h }
func (h *levelLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r.Level.String()+" "+r.Message)
	return nil
}

// above returns the lines at Info or above: what the default logger shows.
func (h *levelLog) above() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(h.lines), func(l string) bool { return l[:5] == "DEBUG" })
}

// A run of failed dials, as docs/operating.md and docs/settings.md give
// it: logged at Warn when it starts and once a minute while it lasts, at
// Info once when a dial succeeds again, and never a line per dial; at the
// default logger's level (Info) those are all a pool that fails shows.
func TestDialFailureRunLogLevels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		var dials atomic.Int64
		down.Store(true)
		log := &levelLog{}
		p, err := New(Config[*fakeConn]{
			MaxConns: 1, MinConns: 1, Logger: slog.New(log),
			Dial: func(context.Context) (*fakeConn, error) {
				dials.Add(1)
				if down.Load() {
					return nil, errors.New("connection refused")
				}
				return &fakeConn{}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		time.Sleep(150 * time.Second)
		down.Store(false)
		time.Sleep(time.Second)
		synctest.Wait()
		want := []string{
			"WARN shoal: dial failed",         // the run starts
			"WARN shoal: dials still failing", // a minute on
			"WARN shoal: dials still failing", // two minutes on
			"INFO shoal: dial succeeded again",
		}
		if got := log.above(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("lines at Info and above for %d dials: %q, want %q", dials.Load(), got, want)
		}
	})
}

// The Logger hears of opens and closes, never of an acquire or a release
// (docs/settings.md): a hundred of each, some of them waiting for the
// connection, add no line to the one that says it opened.
func TestNoLogLinePerAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &levelLog{}
		p, err := New(Config[*fakeConn]{MaxConns: 1, Logger: slog.New(log),
			Dial: func(context.Context) (*fakeConn, error) { return &fakeConn{}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					l, err := p.Acquire(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					time.Sleep(time.Millisecond) // the others wait meanwhile
					l.Release()
				}
			})
		}
		wg.Wait()
		log.mu.Lock()
		defer log.mu.Unlock()
		if want := []string{"DEBUG shoal: connection opened"}; fmt.Sprint(log.lines) != fmt.Sprint(want) {
			t.Errorf("100 acquires and releases logged %q, want only %q", log.lines, want)
		}
	})
}
