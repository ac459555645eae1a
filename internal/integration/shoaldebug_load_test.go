package integration_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// loadedPool is a pool under the load the live page is tested with (the same
// as shoaldebug's own tests use): more
// workers than connections, so that some always wait, one lease that
// leakyHandler never gives back, and dials that failed once.
type loadedPool struct {
	pool *shoal.Pool[int]
	stop func()
}

// loadedMaxConns is the pool's MaxConns.
const loadedMaxConns = 4

// newLoadedPool starts the load; stop ends it and closes the pool.
func newLoadedPool(t *testing.T, reg *shoaldebug.Registry, name string) *loadedPool {
	t.Helper()
	var dials atomic.Int64
	pool, err := shoal.New(shoal.Config[int]{
		Dial: func(context.Context) (int, error) {
			if dials.Add(1) == 1 {
				return 0, errors.New("connection refused (the test's first dial fails)")
			}
			return int(dials.Load()), nil
		},
		MaxConns:      loadedMaxConns,
		LeakThreshold: 100 * time.Millisecond,
		Observer:      reg.NewObserver(name),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	leaked := make(chan shoal.Lease[int], 1)
	wg.Add(1)
	go func() { defer wg.Done(); leakyHandler(ctx, pool, leaked) }()
	for range 3 * loadedMaxConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l, err := pool.Acquire(ctx)
				if err != nil {
					continue
				}
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
	return &loadedPool{pool: pool, stop: stop}
}

// leakyHandler acquires a connection and keeps it until ctx ends: the leak
// whose stack the page must show under this function's name.
func leakyHandler(ctx context.Context, pool *shoal.Pool[int], leaked chan<- shoal.Lease[int]) {
	for ctx.Err() == nil {
		l, err := pool.Acquire(ctx)
		if err == nil {
			leaked <- l
			return
		}
	}
}
