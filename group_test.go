package shoal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// tenants is a Group's Config function over fakeDialers, one per key, that
// counts its calls and the connections open across every key.
type tenants struct {
	mu      sync.Mutex
	dialers map[string]*fakeDialer
	configs map[string]int
	min     int
	open    atomic.Int32
	most    atomic.Int32
	fail    string // a key whose Config fails
}

func newTenants(minConns int) *tenants {
	return &tenants{dialers: map[string]*fakeDialer{}, configs: map[string]int{}, min: minConns}
}

func (ts *tenants) config(key string) (Config[*fakeConn], error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if key == ts.fail {
		return Config[*fakeConn]{}, fmt.Errorf("no tenant %q", key)
	}
	ts.configs[key]++
	d := ts.dialers[key]
	if d == nil {
		d = &fakeDialer{}
		ts.dialers[key] = d
	}
	return Config[*fakeConn]{
		Name:     key,
		MaxConns: 4,
		MinConns: ts.min,
		Dial: func(ctx context.Context) (*fakeConn, error) {
			n := ts.open.Add(1)
			for m := ts.most.Load(); n > m && !ts.most.CompareAndSwap(m, n); m = ts.most.Load() {
			}
			return d.dial(ctx)
		},
		Close: func(c *fakeConn) error { ts.open.Add(-1); return d.close(c) },
	}, nil
}

func (ts *tenants) configCalls(key string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.configs[key]
}

func newTestGroup(t *testing.T, cfg GroupConfig[string, *fakeConn]) *Group[string, *fakeConn] {
	t.Helper()
	g, err := NewGroup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			t.Errorf("Group.Close: %v", err)
		}
	})
	return g
}

// A pool is made on a key's first use and reused after; its Config is
// called once; the pools share the group's budget, never above its size.
func TestGroupMakesPoolsOnDemandUnderOneBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 3)
		ts := newTenants(0)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Config: ts.config, Budget: b})
		ctx := context.Background()
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				for j := range 10 {
					key := fmt.Sprint("t", (i+j)%5)
					err := g.Do(ctx, key, func(c *fakeConn) error {
						time.Sleep(time.Millisecond)
						return nil
					})
					if err != nil {
						t.Errorf("Do(%s): %v", key, err)
					}
				}
			})
		}
		wg.Wait()
		if m := ts.most.Load(); m > 3 {
			t.Fatalf("%d connections open at once under a budget of 3", m)
		}
		if n := g.Len(); n != 5 {
			t.Fatalf("%d pools, want 5", n)
		}
		for i := range 5 {
			if n := ts.configCalls(fmt.Sprint("t", i)); n != 1 {
				t.Fatalf("Config(t%d) called %d times, want once", i, n)
			}
		}
		st := g.Stats()
		if len(st) != 5 || st["t0"].BudgetMembers != 5 {
			t.Fatalf("group stats: %v", st)
		}
		if got := len(b.Stats().Members); got != 5 {
			t.Fatalf("budget members %d, want 5", got)
		}
	})
}

// A pool idle for IdleTimeout is closed, giving its connections back; one
// with a lease out is not; the key's next use makes a new pool.
func TestGroupClosesIdlePools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 4)
		ts := newTenants(1)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Config: ts.config, Budget: b, IdleTimeout: time.Minute})
		ctx := context.Background()
		held, err := g.Acquire(ctx, "busy")
		if err != nil {
			t.Fatal(err)
		}
		l, err := g.Acquire(ctx, "idle")
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := g.Len(); n != 2 {
			t.Fatalf("%d pools before IdleTimeout, want 2", n)
		}
		time.Sleep(16 * time.Second)
		synctest.Wait()
		if st := g.Stats(); len(st) != 1 || st["busy"].Leases != 1 {
			t.Fatalf("after IdleTimeout: %v, want only the busy pool", st)
		}
		// The idle pool's connections, not all: a connection the busy
		// pool dialled beside its one (MinConns' dial and the caller's
		// racing) is not what this test is about.
		if d := ts.dialers["idle"]; d.dials.Load() != d.closes.Load() {
			t.Fatalf("the idle pool dialled %d connections and closed %d, want all closed", d.dials.Load(), d.closes.Load())
		}
		if got := b.Members(); got != 1 {
			t.Fatalf("the closed pool is still in the budget: %d members", got)
		}
		l, err = g.Acquire(ctx, "idle")
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		if n := ts.configCalls("idle"); n != 2 {
			t.Fatalf("Config(idle) called %d times, want twice (again after its pool closed)", n)
		}
		held.Release()
	})
}

// MaxPools: a new key closes the least recently used idle pool, and fails
// with ErrExhausted when every pool is busy.
func TestGroupMaxPools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Config: ts.config, MaxPools: 2, IdleTimeout: -1})
		ctx := context.Background()
		for _, k := range []string{"a", "b"} {
			l, err := g.Acquire(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
			time.Sleep(time.Second)
		}
		l, err := g.Acquire(ctx, "c") // a was used least recently
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		st := g.Stats()
		if _, ok := st["a"]; ok || len(st) != 2 {
			t.Fatalf("after c: %v, want b and c", st)
		}
		l2, err := g.Acquire(ctx, "b")
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Acquire(ctx, "d")
		if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), `"tenants"`) {
			t.Fatalf("a third key with both pools busy: %v, want ErrExhausted naming the group", err)
		}
		l.Release()
		l2.Release()
		if n := ts.open.Load(); n != 2 {
			t.Fatalf("%d connections open, want b's and c's", n)
		}
	})
}

// A tenant's burst takes no other tenant below its minimum: with every
// pool's MinConns 1, a quiet tenant is served at once while another holds
// all it can.
func TestGroupBurstLeavesOthersTheirMinimum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 4)
		ts := newTenants(1)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Config: ts.config, Budget: b})
		ctx := context.Background()
		if err := g.Do(ctx, "quiet", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		burst, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				for burst.Err() == nil {
					_ = g.Do(burst, "loud", func(*fakeConn) error { time.Sleep(time.Millisecond); return nil })
				}
			})
		}
		time.Sleep(time.Second)
		start := time.Now()
		short, cancelShort := context.WithTimeout(ctx, time.Second)
		defer cancelShort()
		if err := g.Do(short, "quiet", func(*fakeConn) error { return nil }); err != nil {
			t.Fatalf("the quiet tenant during the burst: %v (%s)", err, sharesOf(b))
		}
		if waited := time.Since(start); waited > 0 {
			t.Fatalf("the quiet tenant waited %v for its minimum", waited)
		}
		cancel()
		wg.Wait()
		if m := ts.most.Load(); m > 4 {
			t.Fatalf("%d connections open at once under a budget of 4", m)
		}
	})
}

// A negative MaxPools is no bound, as 0 is: every key gets its pool
// while all of them are busy.
func TestGroupNegativeMaxPoolsIsNoBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Config: ts.config, MaxPools: -1, IdleTimeout: -1})
		var leases []Lease[*fakeConn]
		for _, k := range []string{"a", "b", "c"} {
			l, err := g.Acquire(context.Background(), k)
			if err != nil {
				t.Fatalf("key %s with MaxPools -1: %v", k, err)
			}
			leases = append(leases, l)
		}
		if st := g.Stats(); len(st) != 3 {
			t.Fatalf("pools: %v, want a, b and c", st)
		}
		for _, l := range leases {
			l.Release()
		}
	})
}

func TestGroupErrors(t *testing.T) {
	if _, err := NewGroup(GroupConfig[string, int]{}); err == nil || !strings.Contains(err.Error(), "Config") {
		t.Fatalf("no Config: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(0)
		ts.fail = "ghost"
		g, err := NewGroup(GroupConfig[string, *fakeConn]{Name: "tenants", Config: ts.config})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := g.Acquire(ctx, "ghost"); err == nil || !strings.Contains(err.Error(), `no tenant "ghost"`) {
			t.Fatalf("a key whose Config fails: %v", err)
		}
		if n := g.Len(); n != 0 {
			t.Fatalf("a failed key kept a pool: %d", n)
		}
		if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Acquire(ctx, "a"); !errors.Is(err, ErrClosed) {
			t.Fatalf("Acquire after Close: %v", err)
		}
		if n := ts.open.Load(); n != 0 {
			t.Fatalf("%d connections open after Close", n)
		}
	})
}

// A pool whose Config has no Name is named after the group and its rank,
// never after its key, which may be a connection string with a password.
func TestGroupNamesPoolsWithoutTheirKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 4)
		d := &fakeDialer{}
		g := newTestGroup(t, GroupConfig[string, *fakeConn]{Name: "tenants", Budget: b,
			Config: func(string) (Config[*fakeConn], error) {
				return Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 1}, nil
			}})
		for _, key := range []string{"postgres://app:s3cret@db/a", "postgres://app:s3cret@db/b"} {
			if err := g.Do(context.Background(), key, func(*fakeConn) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		for _, m := range b.Stats().Members {
			names = append(names, m.Name)
		}
		if got := strings.Join(names, ","); got != "tenants[1],tenants[2]" {
			t.Fatalf("pool names %q, want tenants[1],tenants[2]", got)
		}
	})
}

// Close waits for a pool still being made when it is called (its Config
// blocked): that pool is closed, and its connections too, before Close
// returns, and its caller gets ErrClosed.
func TestGroupCloseWaitsForPoolBeingMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTenants(1)
		release := make(chan struct{})
		g, err := NewGroup(GroupConfig[string, *fakeConn]{Config: func(key string) (Config[*fakeConn], error) {
			<-release
			return ts.config(key)
		}})
		if err != nil {
			t.Fatal(err)
		}
		acquired := make(chan error, 1)
		go func() {
			l, err := g.Acquire(context.Background(), "slow")
			if err == nil {
				l.Release()
			}
			acquired <- err
		}()
		synctest.Wait() // Acquire is inside Config
		closed := make(chan error, 1)
		go func() { closed <- g.Close(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while a pool was still being made", err)
		default:
		}
		close(release)
		if err := <-closed; err != nil {
			t.Fatalf("Close: %v", err)
		}
		if n := ts.open.Load(); n != 0 {
			t.Fatalf("%d connections open after Close, want 0", n)
		}
		if err := <-acquired; !errors.Is(err, ErrClosed) {
			t.Fatalf("Acquire during Close: %v, want ErrClosed", err)
		}
	})
}
