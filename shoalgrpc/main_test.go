package shoalgrpc

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
)

// TestMain fails the run when any goroutine outlives the tests: every pool
// is closed and every server stopped by the tests' cleanups.
func TestMain(m *testing.M) {
	// Pools with no Logger log to slog.Default(); the tests fail dials on
	// purpose, so their default says nothing (convention_test.go sets its
	// own to see what a pool says).
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// newTestPool returns a plaintext pool to addr, with the test's dialOpts
// after the plaintext transport, closed when the test ends.
func newTestPool(t testing.TB, addr string, opts Options, dialOpts ...grpc.DialOption) *Pool {
	t.Helper()
	p, err := NewClient(addr, opts, append([]grpc.DialOption{insecureCreds()}, dialOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// waitFor polls cond every few milliseconds until it holds or limit passes;
// it reports whether it held. It bounds waits for things that happen in the
// background (a slot given back when a context ends); it is not a timing
// assertion, and limit is generous.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testContext returns a context that ends when the test does or after limit.
func testContext(t testing.TB, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}
