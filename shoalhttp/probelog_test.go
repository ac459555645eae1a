package shoalhttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// stuckHandler is a slog.Handler whose first record blocks until release
// is closed, as a handler writing to a full pipe or a slow collector does;
// entered is closed when that record arrives. Later records pass.
type stuckHandler struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *stuckHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *stuckHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *stuckHandler) WithGroup(string) slog.Handler            { return h }
func (h *stuckHandler) Handle(context.Context, slog.Record) error {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.entered)
		<-h.release
	}
	return nil
}

// A log handler that is slow to take the line about an origin's failed
// first connection holds up only the request that logs it: another request
// to that origin still gets the refusal (or its own failure) at once,
// rather than waiting for the handler.
func TestSlowLoggerDoesNotHoldUpTheOrigin(t *testing.T) {
	addr := refusedAddr(t)
	h := &stuckHandler{entered: make(chan struct{}), release: make(chan struct{})}
	tr, err := NewTransport(Options{Name: "api", Proxy: NoProxy, Logger: slog.New(h)})
	if err != nil {
		t.Fatal(err)
	}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(h.release) }) }
	t.Cleanup(func() {
		release()
		_ = tr.Close(context.Background())
	})
	send := func(to chan<- error) {
		req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
		if err != nil {
			to <- err
			return
		}
		_, err = tr.RoundTrip(req)
		to <- err
	}
	first, second := make(chan error, 1), make(chan error, 1)
	go send(first)
	<-h.entered // the first request's failure is being logged
	go send(second)
	select {
	case err := <-second:
		if !errors.Is(err, shoal.ErrDial) {
			t.Errorf("the second request: %v, want shoal.ErrDial", err)
		}
	case <-time.After(10 * time.Second):
		// A bound, not a measure: the request needs no time of its own.
		t.Error("the second request waited for the log handler that holds the first")
	}
	release()
	if err := <-first; !errors.Is(err, shoal.ErrDial) {
		t.Errorf("the first request: %v, want shoal.ErrDial", err)
	}
}

// The line about a failed first connection is logged outside the origin's
// lock, but Close still waits for it, as the core pool's Close waits for
// the line about a failed dial: once Close has returned, nothing is logged.
func TestCloseWaitsForTheProbesLine(t *testing.T) {
	addr := refusedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		h := &stuckHandler{entered: make(chan struct{}), release: make(chan struct{})}
		tr, err := NewTransport(Options{Proxy: NoProxy, Logger: slog.New(h)})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
			_, _ = tr.RoundTrip(req)
		}()
		<-h.entered // the failure is being logged
		closed := make(chan error, 1)
		go func() { closed <- tr.Close(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Errorf("Close returned (%v) while the line about the failed dial was still being logged", err)
			close(h.release)
			return
		default:
		}
		close(h.release)
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}
