package integration_test

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalgrpc"
	"github.com/shoalpool/shoal/shoalpgx"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// waitLongEnough is how long the tests below keep their traced caller
// waiting once it waits: past the wait-span threshold they set, so that a
// missing span means the caller's context did not reach the pool.
const (
	spanThreshold  = 5 * time.Millisecond
	waitLongEnough = 30 * time.Millisecond
)

// releaseOnceWaiting calls release once waiting reports a caller waiting
// for the pool and it has waited waitLongEnough, in the background. The
// channel closes once release has returned.
func releaseOnceWaiting(t *testing.T, waiting func() int, release func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer release()
		if !waitFor(10*time.Second, func() bool { return waiting() == 1 }) {
			t.Error("the traced caller never waited for the pool")
			return
		}
		time.Sleep(waitLongEnough)
	}()
	return done
}

// TestWaitSpanThroughShoalpgx: shoalpgx passes a query's context to the
// pool, so a query that waited for the pool's one connection on the real
// server shows the wait under the query's span, as docs/metrics.md says.
func TestWaitSpanThroughShoalpgx(t *testing.T) {
	m, rec, tracer := newTraced(t, spanThreshold)
	obs, err := m.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	pool := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(cfg *shoalpgx.Config) {
		cfg.MaxConns = 1
		cfg.Observer = obs
	})
	ctx := testContext(t, 30*time.Second)
	held, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	released := releaseOnceWaiting(t, func() int { return pool.Stat().Shoal().Waiting }, held.Release)

	traced, parent := tracer.Start(ctx, "query")
	var one int
	err = pool.QueryRow(traced, "select 1").Scan(&one)
	parent.End()
	<-released
	if err != nil || one != 1 {
		t.Fatalf("select 1 after waiting: %d, %v", one, err)
	}
	spans := waitSpans(rec)
	if len(spans) != 1 || spans[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("wait spans %v; want one under the query's span", spans)
	}
}

// TestWaitSpanThroughPipelinedShoalpgx: a pipelined statement that waited
// for a stream on a shared connection shows the wait under its span too,
// docs/metrics.md naming shoalpgx with pool_pipeline among the pools that
// pass the caller's context through.
func TestWaitSpanThroughPipelinedShoalpgx(t *testing.T) {
	m, rec, tracer := newTraced(t, spanThreshold)
	obs, err := m.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	// Two connections, one stream each: with one held whole, the other is
	// the only shared connection there can be.
	pool := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(cfg *shoalpgx.Config) {
		cfg.MaxConns = 2
		cfg.Pipeline = 1
		cfg.Observer = obs
	})
	ctx := testContext(t, 30*time.Second)
	held, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	// A statement that waits at the server for a lock the test holds
	// keeps the shared connection's one stream until the test lets go.
	admin := pgtest.AdminConn(t)
	key := int64(os.Getpid())<<8 | 0x5a
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, "select pg_advisory_xact_lock($1)", key); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := pool.Exec(ctx, "select pg_advisory_xact_lock($1)", key)
		blocked <- err
	}()
	if !waitFor(10*time.Second, func() bool { return pool.Stat().Pipelined().Leases == 1 }) {
		t.Fatalf("the blocked statement never took the shared stream: %+v", pool.Stat().Pipelined())
	}
	released := releaseOnceWaiting(t, func() int { return pool.Stat().Pipelined().Waiting }, func() {
		if err := tx.Commit(context.Background()); err != nil {
			t.Error(err)
		}
	})

	traced, parent := tracer.Start(ctx, "query")
	var one int
	err = pool.QueryRow(traced, "select 1").Scan(&one)
	parent.End()
	<-released
	if err := <-blocked; err != nil {
		t.Errorf("the statement behind the lock: %v", err)
	}
	if err != nil || one != 1 {
		t.Fatalf("select 1 after waiting: %d, %v", one, err)
	}
	spans := waitSpans(rec)
	if len(spans) != 1 || spans[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("wait spans %v; want one under the query's span", spans)
	}
}

// TestWaitSpanThroughShoalgrpc: shoalgrpc passes a call's context to the
// pool, so a call that waited for the one stream slot shows the wait under
// the call's span.
func TestWaitSpanThroughShoalgrpc(t *testing.T) {
	m, rec, tracer := newTraced(t, spanThreshold)
	obs, err := m.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	p := newGRPCPool(t, startGRPCServer(t), shoalgrpc.Options{MaxConns: 1, MaxStreams: 1, Observer: obs})
	client := testpb.NewTestServiceClient(p)

	// A stream holds the only slot until the traced call has waited.
	holdCtx, endHold := context.WithCancel(context.Background())
	defer endHold()
	stream, err := client.StreamingOutputCall(holdCtx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	released := releaseOnceWaiting(t, func() int { return p.Stats().Waiting }, endHold)

	ctx, parent := tracer.Start(testContext(t, 30*time.Second), "call")
	_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{})
	parent.End()
	<-released
	if err != nil {
		t.Fatalf("call after waiting for the slot: %v", err)
	}
	// The stream must stay reachable until then: one the garbage
	// collector finds unreachable is canceled, freeing the slot early.
	runtime.KeepAlive(stream)
	spans := waitSpans(rec)
	if len(spans) != 1 || spans[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("wait spans %v; want one under the call's span", spans)
	}
}
