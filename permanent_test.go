package shoal

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// lineCounter is a slog.Handler that keeps the messages logged to it.
type lineCounter struct {
	mu    sync.Mutex
	lines []string
}

func (h *lineCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *lineCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lineCounter) WithGroup(string) slog.Handler            { return h }
func (h *lineCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r.Message)
	return nil
}

func (h *lineCounter) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

var errAuth = errors.New("password authentication failed")

// A dial error no retry can mend (a wrong password after a rotation) fails
// callers at once, even in a pool that was connected, is retried every few
// seconds rather than four times a second, and is logged once when it
// starts, then once a minute, then once when a dial succeeds again.
func TestPermanentDialErrorFailsAtOnceRetriesSlowlyLogsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		refuse := false
		dials := 0
		log := &lineCounter{}
		p, err := New(Config[*fakeConn]{
			MaxConns: 4, MinConns: 1, Logger: slog.New(log),
			Dial: func(ctx context.Context) (*fakeConn, error) {
				mu.Lock()
				defer mu.Unlock()
				dials++
				if refuse {
					return nil, Permanent(errAuth)
				}
				return &fakeConn{}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		refuse = true // the password was rotated under the pool
		mu.Unlock()
		l.Discard()
		synctest.Wait()

		start := time.Now()
		_, err = p.Acquire(context.Background())
		if !errors.Is(err, errAuth) || !errors.Is(err, ErrPermanent) || !errors.Is(err, ErrDial) {
			t.Fatalf("acquire: %v, want the permanent dial error", err)
		}
		if took := time.Since(start); took > 0 {
			t.Fatalf("the acquire took %s to fail on a permanent error", took)
		}
		mu.Lock()
		before := dials
		mu.Unlock()
		time.Sleep(6 * time.Second)
		mu.Lock()
		during := dials - before
		mu.Unlock()
		// MinConns keeps asking for a connection: at 1s, 2s and 4s apart.
		if during > 3 {
			t.Errorf("%d dials in 6s of a permanent error, want at most 3", during)
		}
		if msgs := failingLines(log); msgs != 1 {
			t.Errorf("%d lines about the failing dials in 6s, want 1: %q", msgs, log.messages())
		}
		time.Sleep(3 * time.Minute)
		if msgs := failingLines(log); msgs < 2 || msgs > 4 {
			t.Errorf("%d lines about the failing dials in 3 minutes, want the first and one a minute: %q", msgs, log.messages())
		}
		mu.Lock()
		refuse = false
		mu.Unlock()
		time.Sleep(11 * time.Second) // the longest backoff, then the dial
		if l, err = p.Acquire(context.Background()); err != nil {
			t.Fatalf("acquire after the password was fixed: %v", err)
		}
		l.Release()
		msgs := log.messages()
		if !slices.Contains(msgs, "shoal: dial succeeded again") {
			t.Errorf("no line for the end of the failures: %q", msgs)
		}
	})
}

// failingLines counts the lines about failing dials that h holds.
func failingLines(h *lineCounter) int {
	n := 0
	for _, m := range h.messages() {
		if m == "shoal: dial failed" || m == "shoal: dials still failing" {
			n++
		}
	}
	return n
}

func TestPermanentMark(t *testing.T) {
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) is not nil")
	}
	err := Permanent(errAuth)
	if !errors.Is(err, ErrPermanent) || !errors.Is(err, errAuth) || err.Error() != errAuth.Error() {
		t.Fatalf("Permanent(errAuth) = %q; want errAuth's text, marked", err)
	}
	if Permanent(err) != err {
		t.Fatal("Permanent marked a marked error again")
	}
}
