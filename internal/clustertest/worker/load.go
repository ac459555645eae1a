package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/shoalpgx"
)

// load is the goroutines running queries on the pool, as many as the last
// "load N" said.
//
// A goroutine told to stop finishes its query first: the query's context
// is cancelled only when the worker exits, because pgx closes a connection
// whose query is cut short, and that would show as a connection dropped.
type load struct {
	pool   *shoalpgx.Pool
	query  string
	ctx    context.Context // ends only at exit, after a grace
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	stops []*atomic.Bool // one per goroutine running

	queries    atomic.Int64
	errors     atomic.Int64
	firstError atomic.Value // string
}

func newLoad(pool *shoalpgx.Pool, sleep time.Duration) *load {
	ctx, cancel := context.WithCancel(context.Background())
	return &load{pool: pool, query: fmt.Sprintf("SELECT pg_sleep(%g)", sleep.Seconds()), ctx: ctx, cancel: cancel}
}

// set makes n goroutines run: starts more, or stops the latest ones.
func (l *load) set(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.stops) < n {
		stop := new(atomic.Bool)
		l.stops = append(l.stops, stop)
		l.wg.Add(1)
		go l.loop(stop)
	}
	for len(l.stops) > n {
		l.stops[len(l.stops)-1].Store(true)
		l.stops = l.stops[:len(l.stops)-1]
	}
}

// running returns how many goroutines run now.
func (l *load) running() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.stops)
}

// stopGrace is how long stop lets queries and acquires finish before it
// cuts them short: a goroutine may wait for a connection for ever when the
// budget has none for this worker.
const stopGrace = 2 * time.Second

// stop ends every goroutine and waits for them.
func (l *load) stop() {
	l.set(0)
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopGrace):
		l.cancel()
		<-done
	}
	l.cancel()
}

// loop runs queries until stop is set. An error is counted and followed by
// a short sleep, so that a refusal that comes at once does not spin.
func (l *load) loop(stop *atomic.Bool) {
	defer l.wg.Done()
	for !stop.Load() {
		if _, err := l.pool.Exec(l.ctx, l.query); err != nil {
			if l.ctx.Err() != nil {
				return
			}
			l.errors.Add(1)
			l.firstError.CompareAndSwap(nil, err.Error())
			time.Sleep(10 * time.Millisecond)
			continue
		}
		l.queries.Add(1)
	}
}
