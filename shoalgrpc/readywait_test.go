package shoalgrpc

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/ctxwait"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestWaitForReadyDeadlineErrorNamesThePool guards the error of a
// grpc.WaitForReady call whose deadline passes while the server is down:
// it names the pool, says how long the call waited and for how many
// connections, and gives the failed dial's reason, each layer once.
func TestWaitForReadyDeadlineErrorNamesThePool(t *testing.T) {
	addr := refusedAddr(t)
	p := newTestPool(t, addr, Options{Name: "inventory", MaxConns: 3, DialTimeout: 2 * time.Second})
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err := testpb.NewTestServiceClient(p).UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
	checkReadyWaitError(t, err, addr, deadline)
}

// TestWaitForReadyDeadlineDuringAPauseNamesThePool: the call's deadline
// passes while it pauses between tries, and the pause ends before the call
// sees it, so that its next try finds the context ended. The error is the
// same as when the pause sees the deadline: a loaded machine orders the two
// either way.
func TestWaitForReadyDeadlineDuringAPauseNamesThePool(t *testing.T) {
	readyPause = func(ctx context.Context, _ time.Duration) bool {
		<-ctx.Done()
		return true // the pause's timer fired, but the call ran again late
	}
	t.Cleanup(func() { readyPause = ctxwait.Sleep })
	addr := refusedAddr(t)
	p := newTestPool(t, addr, Options{Name: "inventory", MaxConns: 3, DialTimeout: 2 * time.Second})
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	_, err := testpb.NewTestServiceClient(p).UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
	checkReadyWaitError(t, err, addr, deadline)
}

// checkReadyWaitError checks the error of a WaitForReady call to the
// refused addr on the pool "inventory" of 3 connections, whose deadline
// passed after about deadline.
func checkReadyWaitError(t *testing.T, err error, addr string, deadline time.Duration) {
	t.Helper()
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a WaitForReady call whose deadline passed: %v, want DeadlineExceeded", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `shoalgrpc pool "inventory": acquire: context deadline exceeded (waited `) ||
		!strings.Contains(msg, " for one of 3 connections") ||
		!strings.Contains(msg, "; last dial failed: connecting to "+addr+": the connection was refused") {
		t.Errorf("the error does not name the pool, its wait and the dial's reason: %s", msg)
	}
	if m := regexp.MustCompile(`waited (\S+) for`).FindStringSubmatch(msg); m == nil {
		t.Errorf("the error says no wait: %s", msg)
	} else if waited, perr := time.ParseDuration(m[1]); perr != nil || waited < deadline*3/4 {
		t.Errorf("the error says the call waited %s; it waited about %s: %s", m[1], deadline, msg)
	}
	for _, piece := range []string{"shoal", "acquire", "dial failed"} {
		if n := strings.Count(msg, piece); n > 1 {
			t.Errorf("%q appears %d times: %s", piece, n, msg)
		}
	}
}
