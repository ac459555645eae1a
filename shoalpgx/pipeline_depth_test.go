package shoalpgx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A shared connection carries at most Pipeline statements at once, those
// whose callers gave up included: a given-up statement keeps its place
// until its answer is read. Twenty callers, every third giving up after
// 10ms, run 50ms statements on 2 shared connections of depth 2, while the
// test counts each connection's requests (statement preparations, which
// ride with a statement, aside) every millisecond.
func TestPipelineDepthBoundsEachConnection(t *testing.T) {
	const depth = 2
	p := newPipelinedPool(t, 4, depth, nil) // 2 shared connections
	ctx := pgtest.Ctx(t)
	done := make(chan struct{})
	var most atomic.Int32
	var samples int
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			for _, c := range p.pipe.conns() {
				c.mu.Lock()
				n := 0
				for _, r := range c.pending {
					if r.onDone == nil {
						n++
					}
				}
				c.mu.Unlock()
				if int32(n) > most.Load() {
					most.Store(int32(n))
				}
			}
			samples++
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	var wg sync.WaitGroup
	var gaveUp atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			cctx := ctx
			if i%3 == 0 {
				var cancel context.CancelFunc
				cctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
				defer cancel()
			}
			var v int
			err := p.QueryRow(cctx, "select $1::int from pg_sleep(0.05)", i).Scan(&v)
			switch {
			case i%3 == 0 && errors.Is(err, context.DeadlineExceeded):
				gaveUp.Add(1)
			case err != nil || v != i:
				t.Errorf("caller %d: %d, %v", i, v, err)
			}
		})
	}
	wg.Wait()
	// The given-up statements' answers are read after their callers left.
	pgtest.WaitFor(t, 5*time.Second, "every answer read", func() bool { return p.Stat().AcquiredConns() == 0 })
	close(done)
	<-sampled
	t.Logf("%d samples; at most %d statements on a connection; %d callers gave up", samples, most.Load(), gaveUp.Load())
	if m := most.Load(); m > depth {
		t.Fatalf("a shared connection carried %d statements at once, want at most Pipeline (%d)", m, depth)
	}
	if most.Load() < depth {
		t.Fatalf("no connection was seen carrying %d statements: the test did not load the connections", depth)
	}
}

// Shared connections idle for MaxConnIdleTime close, down to the two the
// pool keeps: the shared pool grows under load past its floor, and once
// the load is gone it shrinks back within a few idle times.
func TestPipelineSharedConnectionsCloseWhenIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	p := newPipelinedPool(t, 8, 2, func(c *Config) { c.MaxConnIdleTime = idle })
	ctx := pgtest.Ctx(t)
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Go(func() {
			var v int
			if err := p.QueryRow(ctx, "select $1::int from pg_sleep(0.05)", i).Scan(&v); err != nil || v != i {
				t.Errorf("caller %d: %d, %v", i, v, err)
			}
		})
	}
	wg.Wait()
	grown := len(p.pipe.conns())
	if grown <= 2 {
		t.Fatalf("%d shared connections after 24 callers of 50ms statements, want more than the floor of 2", grown)
	}
	start := time.Now()
	pgtest.WaitFor(t, 20*idle, "the shared connections back at their floor of 2", func() bool { return len(p.pipe.conns()) == 2 })
	t.Logf("%d shared connections under load; back at 2 %v after it (MaxConnIdleTime %v)", grown, time.Since(start).Round(time.Millisecond), idle)
}
