package shoalotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// TestWaitSpanOfUnnamedMetrics guards metrics made with Pool(""): with wait
// spans on, a waited acquire inside a trace gets its span under the pool's
// own name instead of crashing the acquirer.
func TestWaitSpanOfUnnamedMetrics(t *testing.T) {
	m, rec, tracer := newTraced(t, 0)
	obs, err := m.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := shoal.New(shoal.Config[*conn]{Name: "orders", Dial: dial, MaxConns: 1, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	held, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	ctx, parent := tracer.Start(context.Background(), "request")
	defer parent.End()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full pool: %v, want a deadline", err)
	}
	spans := waitSpans(rec)
	if len(spans) != 1 {
		t.Fatalf("%d wait spans, want 1", len(spans))
	}
	if got := attr(spans[0], "db.client.connection.pool.name"); got != "orders" {
		t.Errorf("wait span's pool name = %q, want the pool's own, %q", got, "orders")
	}
}
