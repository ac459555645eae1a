package shoal

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A pool with no Logger logs to slog.Default(): hundreds of pools fail
	// dials and health checks here on purpose, so the tests' own default
	// says nothing. defaultlog_test.go sets its own to see what a pool says.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// fakeConn is a connection that knows whether it was closed and how often
// it is in use, so tests can check the pool's promises directly.
type fakeConn struct {
	id     int
	inUse  atomic.Int32
	closed atomic.Bool
}

// fakeDialer hands out fakeConns and counts dials and closes. Its dial can
// be made to fail or to block.
type fakeDialer struct {
	mu     sync.Mutex
	conns  []*fakeConn
	err    error
	block  chan struct{} // when non-nil, dials wait for it (or ctx)
	dials  atomic.Int32
	closes atomic.Int32
}

func (d *fakeDialer) dial(ctx context.Context) (*fakeConn, error) {
	d.dials.Add(1)
	d.mu.Lock()
	block, err := d.block, d.err
	d.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &fakeConn{id: len(d.conns) + 1}
	d.conns = append(d.conns, c)
	return c, nil
}

// stairLeases takes total leases of p, enough to open and fill every
// connection, then keeps id leases on the connection numbered id and
// releases the rest, so that the connections carry 1, 2, 3, ... leases.
// It returns the leases kept, all and by connection.
func stairLeases(t *testing.T, p *Pool[*fakeConn], total int) (kept []Lease[*fakeConn], byConn map[int][]Lease[*fakeConn]) {
	t.Helper()
	var all []Lease[*fakeConn]
	for range total {
		all = append(all, mustAcquire(t, p))
	}
	byConn = map[int][]Lease[*fakeConn]{}
	for _, l := range all {
		id := l.Value().id
		if len(byConn[id]) < id {
			byConn[id] = append(byConn[id], l)
			kept = append(kept, l)
		} else {
			l.Release()
		}
	}
	return kept, byConn
}

// blockDials makes the dials from now on wait until the channel it
// returns is closed (or their context ends).
func (d *fakeDialer) blockDials() chan struct{} {
	block := make(chan struct{})
	d.mu.Lock()
	d.block = block
	d.mu.Unlock()
	return block
}

func (d *fakeDialer) close(c *fakeConn) error {
	if c.closed.Swap(true) {
		panic("connection closed twice")
	}
	d.closes.Add(1)
	return nil
}

func (d *fakeDialer) openConns() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.conns {
		if !c.closed.Load() {
			n++
		}
	}
	return n
}

// newTestPool makes a pool on a fakeDialer and closes it (checking that
// Close succeeds) when the test ends.
func newTestPool(t testing.TB, cfg Config[*fakeConn]) (*Pool[*fakeConn], *fakeDialer) {
	t.Helper()
	d := &fakeDialer{}
	if cfg.Dial == nil {
		cfg.Dial = d.dial
	}
	if cfg.Close == nil {
		cfg.Close = d.close
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v (stats %+v)", err, p.Stats())
		}
	})
	return p, d
}

// mustAcquire acquires with a generous deadline and fails the test on error.
func mustAcquire(t testing.TB, p *Pool[*fakeConn]) Lease[*fakeConn] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return l
}

// acquireAsync starts an Acquire on a goroutine of its own and returns
// where its lease arrives: the zero Lease if the Acquire failed. The test's
// goroutine judges it: only that goroutine may end the test, and in a bubble
// a goroutine still waiting when the test fails must not touch t.
func acquireAsync(ctx context.Context, p *Pool[*fakeConn]) <-chan Lease[*fakeConn] {
	got := make(chan Lease[*fakeConn], 1)
	go func() {
		l, err := p.Acquire(ctx)
		if err != nil {
			l = Lease[*fakeConn]{}
		}
		got <- l
	}()
	return got
}

// acquireMany starts n acquires on goroutines of their own, as acquireAsync
// does each.
func acquireMany(ctx context.Context, p *Pool[*fakeConn], n int) []<-chan Lease[*fakeConn] {
	waiters := make([]<-chan Lease[*fakeConn], n)
	for i := range waiters {
		waiters[i] = acquireAsync(ctx, p)
	}
	return waiters
}

// fullPoolWithWaiters makes a pool of one connection, holds that
// connection until the test ends and leaves n acquires waiting behind it:
// the queue a test grows the pool under to see how the waiters are served.
func fullPoolWithWaiters(t testing.TB, n int) (*Pool[*fakeConn], *fakeDialer, []<-chan Lease[*fakeConn]) {
	t.Helper()
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	held := mustAcquire(t, p)
	t.Cleanup(held.Release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	waiters := acquireMany(ctx, p, n)
	wantWaiters(t, p, n)
	return p, d, waiters
}

// releaseEach waits for each acquire acquireMany started and releases the
// lease of each that succeeded.
func releaseEach(waiters []<-chan Lease[*fakeConn]) {
	for _, w := range waiters {
		if l := <-w; l.rec != nil {
			l.Release()
		}
	}
}

// WaitFor waits until cond holds, looking every millisecond, and fails the
// test, saying what it waited for, if 10 seconds pass first. It is the core
// tests' one poll, for what runs on real time (real sockets, real
// concurrency under -race, the state machine); under testing/synctest a
// test sleeps the fake time it needs, and synctest.Wait() then a check is
// exact. In a bubble WaitFor steps the fake clock a millisecond at a time,
// to measure when something happens. It asserts nothing about speed.
// Exported for the external tests (package shoal_test); t is a testing.TB
// or a *rapid.T.
func WaitFor(t interface {
	Helper()
	Fatalf(format string, args ...any)
}, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// wantWaiters waits until every other goroutine in the test's bubble is
// blocked and checks that n callers wait in the pool's queue.
func wantWaiters(t testing.TB, p *Pool[*fakeConn], n int) {
	t.Helper()
	synctest.Wait()
	if got := p.Stats().Waiting; got != n {
		t.Fatalf("%d callers waiting, want %d", got, n)
	}
}

var errBoom = errors.New("boom")
