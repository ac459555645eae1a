package shoal

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// dialLineHandler counts the pool's "dial failed" lines; with hold set, the
// first one signals entered and waits for release before it returns.
type dialLineHandler struct {
	hold    bool
	entered chan struct{}
	release chan struct{}
	lines   atomic.Int32
}

func (h *dialLineHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *dialLineHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *dialLineHandler) WithGroup(string) slog.Handler            { return h }

func (h *dialLineHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "shoal: dial failed" {
		return nil
	}
	if h.lines.Add(1) == 1 && h.hold {
		h.entered <- struct{}{}
		<-h.release
	}
	return nil
}

// Close returns after a failed dial's line, not before it: a program that
// closes its pool and then its log sees every line the pool had to say.
func TestCloseWaitsForAFailedDialsLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &dialLineHandler{hold: true, entered: make(chan struct{}), release: make(chan struct{})}
		d := &fakeDialer{err: errBoom}
		p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 1, Logger: slog.New(h)})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = p.Acquire(context.Background()) }()
		<-h.entered // the dial failed, and its line is being written
		closed := make(chan error, 1)
		go func() { closed <- p.Close(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-closed:
			close(h.release)
			t.Fatalf("Close returned (%v) while the failed dial's line was still being written", err)
		default:
		}
		close(h.release)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if n := h.lines.Load(); n != 1 {
			t.Fatalf("%d dial-failure lines, want 1", n)
		}
	})
}

// A dial that Close cuts short is no news about the server: it logs no
// warning.
func TestCloseCutsADialShortQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &dialLineHandler{}
		d := &fakeDialer{block: make(chan struct{})}
		p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 1, Logger: slog.New(h)})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = p.Acquire(context.Background()) }()
		synctest.Wait() // the dial is in flight
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if n := h.lines.Load(); n != 0 {
			t.Fatalf("%d dial-failure lines for a dial that Close cut short, want none", n)
		}
	})
}
