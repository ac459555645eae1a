// Package debugload gives the tests of shoal's live page (shoaldebug, and
// the headless-browser test of internal/integration) one pool under the
// load the page is tested with, so that both show the same waits, leak and
// failed dial.
package debugload

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// MaxConns is the loaded pool's MaxConns.
const MaxConns = 4

// Pool is a pool under load: more workers than connections, so that some
// always wait, one lease that is never given back, and a dial that failed
// once.
type Pool struct {
	// Pool is the loaded pool.
	Pool *shoal.Pool[int]
	// Stop ends the load, gives the leaked lease back and closes the pool.
	Stop func()
}

// New starts the load on a pool reporting to obs, which is how the page
// sees it. acquire takes the lease that is never given back; it must be a
// function of the test's own package, because a leak report names the
// first function outside shoal's packages, and this one is inside them.
func New(t testing.TB, obs shoal.Observer, acquire func(context.Context, *shoal.Pool[int]) (shoal.Lease[int], error)) *Pool {
	t.Helper()
	var dials atomic.Int64
	pool, err := shoal.New(shoal.Config[int]{
		Dial: func(context.Context) (int, error) {
			if dials.Add(1) == 1 {
				return 0, errors.New("connection refused (the test's first dial fails)")
			}
			return int(dials.Load()), nil
		},
		MaxConns:      MaxConns,
		LeakThreshold: 100 * time.Millisecond,
		Observer:      obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	leaked := make(chan shoal.Lease[int], 1)
	wg.Add(1)
	go func() { defer wg.Done(); leak(ctx, pool, acquire, leaked) }()
	for range 3 * MaxConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l, err := pool.Acquire(ctx)
				if err != nil {
					continue
				}
				// Held a while, so that the other workers wait.
				time.Sleep(5 * time.Millisecond)
				l.Release()
			}
		}()
	}
	stop := func() {
		cancel()
		wg.Wait()
		select {
		case l := <-leaked:
			l.Release()
		default:
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if err := pool.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	return &Pool{Pool: pool, Stop: stop}
}

// leak takes a lease with acquire, retrying until it has one or ctx ends,
// and keeps it in leaked: the leak whose stack the page must show.
func leak(ctx context.Context, pool *shoal.Pool[int], acquire func(context.Context, *shoal.Pool[int]) (shoal.Lease[int], error), leaked chan<- shoal.Lease[int]) {
	for ctx.Err() == nil {
		l, err := acquire(ctx, pool)
		if err == nil {
			leaked <- l
			return
		}
	}
}
