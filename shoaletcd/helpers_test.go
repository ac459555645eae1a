package shoaletcd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newClient returns a client of its own (so its own leases) to addr,
// closed when the test ends.
func newClient(t *testing.T, addr string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{addr},
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcd client for %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testPrefix returns a key prefix no other run uses, and deletes what the
// test left under it when it ends (registered first, so it runs last).
func testPrefix(t *testing.T, c *clientv3.Client) string {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	prefix := fmt.Sprintf("/shoal-test/%s/%d/", name, time.Now().UnixNano())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Delete(ctx, prefix, clientv3.WithPrefix()); err != nil {
			t.Logf("cleaning up %s: %v", prefix, err)
		}
	})
	return prefix
}

// testLogger writes the budget's log to the test's, at Debug.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ = io.Discard

// newBudget creates a budget member on its own client, closed at the end.
func newBudget(t *testing.T, addr string, opts Options) *Budget {
	t.Helper()
	c := newClient(t, addr)
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, c, opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// fakePool stands in for a shoal pool: it holds min(share, demand)
// permits, acquiring in the background (as the pool's dial goroutines do)
// and releasing those above (as the pool closes connections above its
// share, and, here, at once those idle).
type fakePool struct {
	b      *Budget
	demand atomic.Int64
	share  atomic.Int64
	shares atomic.Int64 // SetShare calls
	drops  atomic.Int64 // permits released while running
	// revokes counts the drops the budget asked for (OnRevoke), apart
	// from those of a share below what the pool held.
	revokes atomic.Int64
	// asked counts the permits the budget asked to revoke, at the asking
	// (the drop follows in the pool's own time).
	asked atomic.Int64

	mu      sync.Mutex
	held    []shoal.BudgetPermit
	max     int                         // most permits held at once
	revoked map[shoal.BudgetPermit]bool // permits the budget took back (OnRevoke), to release first

	leave  func()
	cancel context.CancelFunc
	done   chan struct{}
}

func (f *fakePool) Demand() int    { return int(f.demand.Load()) }
func (f *fakePool) SetShare(n int) { f.share.Store(int64(n)); f.shares.Add(1) }

// newFakePool joins b with demand d and starts holding permits.
func newFakePool(t *testing.T, b *Budget, d int) *fakePool {
	f := &fakePool{b: b, done: make(chan struct{})}
	f.demand.Store(int64(d))
	f.share.Store(-1)
	leave, err := b.Join(f)
	if err != nil {
		t.Fatal(err)
	}
	f.leave = leave
	if f.share.Load() < 0 {
		t.Fatal("Join returned before calling SetShare")
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go f.run(ctx)
	t.Cleanup(f.stop)
	return f
}

func (f *fakePool) run(ctx context.Context) {
	defer close(f.done)
	for ctx.Err() == nil {
		want := min(int(f.share.Load()), f.Demand())
		f.mu.Lock()
		n := len(f.held)
		var drop shoal.BudgetPermit
		// As the core pool does: a revoked permit's connection closes
		// first, whatever the share; then the newest above the share.
		for i, p := range f.held {
			if f.revoked[p] {
				drop = p
				f.held = append(f.held[:i], f.held[i+1:]...)
				delete(f.revoked, p)
				f.revokes.Add(1)
				break
			}
		}
		if drop == nil && n > want {
			drop = f.held[n-1]
			f.held = f.held[:n-1]
		}
		f.mu.Unlock()
		switch {
		case drop != nil:
			f.drops.Add(1)
			drop.Release()
		case n < want:
			actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			p, err := f.b.Acquire(actx)
			cancel()
			if err == nil {
				if r, ok := p.(interface{ OnRevoke(func()) }); ok {
					var once sync.Once
					r.OnRevoke(func() {
						once.Do(func() { f.asked.Add(1) })
						f.mu.Lock()
						if f.revoked == nil {
							f.revoked = map[shoal.BudgetPermit]bool{}
						}
						f.revoked[p] = true
						f.mu.Unlock()
					})
				}
				f.mu.Lock()
				f.held = append(f.held, p)
				f.max = max(f.max, len(f.held))
				f.mu.Unlock()
			}
		default:
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// stop releases everything, leaves the budget, and ends the goroutine.
func (f *fakePool) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	<-f.done
	f.cancel = nil
	f.mu.Lock()
	held := f.held
	f.held = nil
	f.mu.Unlock()
	for _, p := range held {
		p.Release()
	}
	f.leave()
}

// holding returns how many permits the pool holds now.
func (f *fakePool) holding() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.held)
}

// slotsHeld counts the slot keys of budget name under prefix in etcd.
func slotsHeld(t *testing.T, c *clientv3.Client, prefix, name string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Get(ctx, newKeys(prefix, name).slots(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("counting slots: %v", err)
	}
	return int(r.Count)
}

// watchSlots polls etcd every 20ms until the test ends and fails it if
// budget name ever has more than size slot keys.
func watchSlots(t *testing.T, c *clientv3.Client, prefix, name string, size int) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var most atomic.Int64
	go func() {
		defer close(done)
		k := newKeys(prefix, name)
		for ctx.Err() == nil {
			qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
			r, err := c.Get(qctx, k.slots(), clientv3.WithPrefix(), clientv3.WithCountOnly())
			qcancel()
			if err == nil && r.Count > most.Load() {
				most.Store(r.Count)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if m := most.Load(); m > int64(size) {
			t.Errorf("budget %s had %d slot keys at once, above its size %d", name, m, size)
		}
		t.Logf("most slot keys at once: %d of %d", most.Load(), size)
	})
}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s: %s", d, what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// debugState describes b's inner state, for failure messages.
func debugState(b *Budget) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	idle, deleting := 0, 0
	for _, o := range b.owned {
		switch {
		case o.deleting:
			deleting++
		case o.permit == nil:
			idle++
		}
	}
	return fmt.Sprintf("{share %d pool %d permits %d owned %d (idle %d deleting %d) pending %d view slots %d members %d rev %d localRev %d online %v opFailed %v contact %v ago}",
		b.share, b.poolShareLocked(), len(b.permits), len(b.owned), idle, deleting, len(b.pending), len(b.view.slots), len(b.view.members),
		b.view.rev, b.localRev, b.onlineLocked(time.Now()), b.opFailed, time.Since(b.lastContact).Round(time.Millisecond))
}
