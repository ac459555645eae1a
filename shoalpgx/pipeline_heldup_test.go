package shoalpgx

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// When every shared connection is held up and the one the pool may still
// open is slow to come, a statement waits for whichever comes first: here
// a statement on a held-up connection answered, long before the dial. The
// pool's dials block once both shared connections are open; a 5s and a 1s
// statement hold the two up; the quick statement runs on the second once
// it is answered, while the first still runs and the dial still waits.
func TestPipelineHeldUpConnectionsLeaveTheStatementToTheFirstAnswer(t *testing.T) {
	var gate atomic.Bool
	release := make(chan struct{})
	var blocked atomic.Int32
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		var d net.Dialer
		c.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if gate.Load() {
				blocked.Add(1)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return d.DialContext(ctx, network, addr)
		}
	})
	defer close(release)
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "both shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	gate.Store(true)
	// The 5s statement's caller gives up once the test has its answer.
	longCtx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	slow := func(ctx context.Context, sql string) <-chan uint32 {
		ch := make(chan uint32, 1)
		go func() {
			var pid uint32
			if err := p.QueryRow(ctx, sql).Scan(&pid); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v", sql, err)
			}
			ch <- pid
		}()
		return ch
	}
	longest := slow(longCtx, "select pg_backend_pid() from pg_sleep(5)")
	pgtest.WaitFor(t, 5*time.Second, "one shared connection held up", func() bool {
		n := 0
		for _, c := range p.pipe.conns() {
			if p.pipe.stalled(c) {
				n++
			}
		}
		return n == 1
	})
	shorter := slow(ctx, "select pg_backend_pid() from pg_sleep(1)")
	waitAllHeldUp(t, p, 2)
	var pid uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-longest:
		t.Fatal("the 5s statement ended before the quick one: the test proves nothing")
	default:
	}
	if n := blocked.Load(); n == 0 {
		t.Error("the pool tried no dial for the quick statement: the test proves nothing about the first to come")
	}
	if len(p.pipe.conns()) != 2 {
		t.Fatalf("%d shared connections: the blocked dial finished", len(p.pipe.conns()))
	}
	if b := <-shorter; pid != b {
		t.Fatalf("the quick statement ran on backend %d, not on the one answered first (%d)", pid, b)
	}
}
