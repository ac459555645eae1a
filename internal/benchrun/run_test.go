package benchrun

import (
	"context"
	"math"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// TestWindowContinuesFromWarmup: the measured window picks up where the
// warm-up left off. Four workers share a server that takes 10ms per
// request, one at a time, so that once they queue every request takes
// 40ms and the server does 100 a second; had the workers stopped after the
// warm-up and started afresh, the window would begin with an empty queue
// (requests of 10, 20 and 30ms, more than 100 a second at first).
func TestWindowContinuesFromWarmup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := RunCase(context.Background(), queueCase(), 4, Settings{
			Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond,
			SetupTimeout: time.Second, OpTimeout: time.Second,
		})
		if res.Status != StatusOK {
			t.Fatalf("status %s: %s", res.Status, res.Reason)
		}
		if res.Latency.Min != 40*time.Millisecond || res.Latency.Max != 40*time.Millisecond {
			t.Errorf("latencies %v to %v, want 40ms each: the queue was not as the warm-up left it", res.Latency.Min, res.Latency.Max)
		}
		for k, ips := range res.SliceIPS {
			if math.Abs(ips-100) > 1e-6 {
				t.Errorf("slice %d: %v ops/s, want 100 (slices %v)", k, ips, res.SliceIPS)
			}
		}
		if math.Abs(res.IPS-100) > 1e-6 || res.Window != 100*time.Millisecond {
			t.Errorf("%v ops/s over %v, want 100 over 100ms", res.IPS, res.Window)
		}
		if s, ok := res.Spread(); !ok || s > 1e-9 {
			t.Errorf("spread %v (%v), want 0", s, ok)
		}
	})
}

// queueCase is a case whose requests go to a server that serves one at a
// time, each taking 10ms: with w workers, once they queue, every request
// takes w times 10ms and the server does 100 a second.
func queueCase() Case {
	server := make(chan struct{}, 1)
	return Case{Name: "queue", Setup: func(context.Context) (*Instance, error) {
		return &Instance{Op: func(ctx context.Context) (time.Duration, error) {
			select {
			case server <- struct{}{}:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			time.Sleep(10 * time.Millisecond)
			<-server
			return 0, nil
		}}, nil
	}}
}

// TestWarmupLastsAnOperationPerWorker: a warm-up shorter than the queue
// takes to fill (8 workers, 80ms) goes on until every worker has finished
// an operation, so that the window does not measure the filling: its
// first slices would otherwise count the short requests of the first
// round, more than the server's 100 a second.
func TestWarmupLastsAnOperationPerWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res := RunCase(context.Background(), queueCase(), 8, Settings{
			Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond,
			SetupTimeout: time.Second, OpTimeout: time.Second,
		})
		if res.Status != StatusOK {
			t.Fatalf("status %s: %s", res.Status, res.Reason)
		}
		for k, ips := range res.SliceIPS {
			if math.Abs(ips-100) > 1e-6 {
				t.Errorf("slice %d: %v ops/s, want 100 (slices %v)", k, ips, res.SliceIPS)
			}
		}
	})
}

// TestConnsOpenedCountsTheSetup: a pool that opens its connections in
// Setup and keeps them reports them as opened, and none opened while
// measured.
func TestConnsOpenedCountsTheSetup(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c := Case{Name: "pooled", Pooled: true, Setup: func(ctx context.Context) (*Instance, error) {
		pool, err := shoal.New(shoal.Config[net.Conn]{
			Dial: func(ctx context.Context) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "tcp", ln.Addr().String())
			},
			MaxConns: 4, MinIdle: 4,
		})
		if err != nil {
			return nil, err
		}
		if err := pool.Warm(ctx); err != nil {
			return nil, err
		}
		return &Instance{
			Op: func(ctx context.Context) (time.Duration, error) {
				l, err := pool.Acquire(ctx)
				if err != nil {
					return 0, err
				}
				l.Release()
				return 0, nil
			},
			ConnsOpened: func() int64 { return pool.Stats().Dials },
			Close:       func() error { return pool.Close(context.Background()) },
		}, nil
	}}
	res := RunCase(context.Background(), c, 2, Settings{Warmup: 20 * time.Millisecond, Duration: 50 * time.Millisecond, SetupTimeout: 10 * time.Second, OpTimeout: 10 * time.Second})
	if res.Status != StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if res.ConnsOpenedTotal == nil || *res.ConnsOpenedTotal != 4 || res.ConnsOpened == nil || *res.ConnsOpened != 0 {
		t.Errorf("opened %v in all, %v while measured; want 4 and 0", deref(res.ConnsOpenedTotal), deref(res.ConnsOpened))
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
