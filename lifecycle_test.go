package shoal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/failrun"
)

// reasons records OnDisconnect calls.
type reasons struct {
	mu   sync.Mutex
	list []Reason
}

func (r *reasons) hook(_ *fakeConn, why Reason) {
	r.mu.Lock()
	r.list = append(r.list, why)
	r.mu.Unlock()
}

func (r *reasons) count(why Reason) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.list {
		if x == why {
			n++
		}
	}
	return n
}

// Each connection draws its own lifetime (pgx#1437 was a pool where the
// jitter was drawn once and so did nothing).
func TestLifetimeJitterIsPerConnection(t *testing.T) {
	const n = 40
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: n, MaxLifetime: time.Hour, LifetimeJitter: 30 * time.Minute})
	var leases []Lease[*fakeConn]
	for i := 0; i < n; i++ {
		leases = append(leases, mustAcquire(t, p))
	}
	seen := map[int64]bool{}
	for _, l := range leases {
		life := time.Duration(l.rec.c.expiresAt - l.rec.c.createdAt)
		if life < time.Hour || life > 90*time.Minute {
			t.Errorf("lifetime %s outside [1h, 1h30m]", life)
		}
		seen[l.rec.c.expiresAt-l.rec.c.createdAt] = true
		l.Release()
	}
	if len(seen) < n/2 {
		t.Fatalf("only %d distinct lifetimes among %d connections: jitter is not per connection", len(seen), n)
	}
}

// The jitter adds to MaxLifetime, as pgxpool's does: no connection closes
// for its age before MaxLifetime, every one has by MaxLifetime+jitter, and
// in between some have and some have not. Ages are exact under synctest.
func TestLifetimeJitterAddsToMaxLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		const life, jitter = time.Hour, 30 * time.Minute
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: n, MaxLifetime: life, LifetimeJitter: jitter})
		leases := make([]Lease[*fakeConn], n)
		for i := range leases {
			leases[i] = mustAcquire(t, p)
		}
		// Every connection of the first round, leased or not: a dial can
		// race a caller's and open one that no lease above got.
		synctest.Wait()
		first := map[*fakeConn]bool{}
		d.mu.Lock()
		for _, c := range d.conns {
			first[c] = true
		}
		d.mu.Unlock()
		// originals acquires n leases, counts how many are connections of
		// the first round, and releases them all.
		originals := func() int {
			k := 0
			for i := range leases {
				leases[i] = mustAcquire(t, p)
				if first[leases[i].Value()] {
					k++
				}
			}
			for _, l := range leases {
				l.Release()
			}
			return k
		}
		for _, l := range leases {
			l.Release()
		}
		time.Sleep(life - time.Nanosecond)
		if k := originals(); k != n {
			t.Fatalf("%d of %d connections closed before MaxLifetime (%s)", n-k, n, life)
		}
		time.Sleep(jitter / 2)
		// Each connection's lifetime is uniform over the jitter: all 40 on
		// one side of its middle has a chance of 2^-39.
		if k := originals(); k == 0 || k == n {
			t.Fatalf("%d of %d connections alive halfway through the jitter; want some, not all", k, n)
		}
		time.Sleep(jitter/2 + time.Nanosecond)
		if k := originals(); k != 0 {
			t.Fatalf("%d connections alive past MaxLifetime+LifetimeJitter (%s)", k, life+jitter)
		}
	})
}

func TestLifetimeClosesConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		const life = 30 * time.Millisecond
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2, MaxLifetime: life,
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
		})
		l := mustAcquire(t, p)
		first := l.Value()
		l.Release()
		// The maintenance goroutine closes it once old, with nobody
		// acquiring.
		time.Sleep(2 * life)
		synctest.Wait()
		if !first.closed.Load() {
			t.Fatalf("the connection still open %s after it was dialled with a lifetime of %s", 2*life, life)
		}
		l = mustAcquire(t, p)
		if l.Value() == first {
			t.Fatal("expired connection handed out")
		}
		l.Release()
		if why.count(ReasonLifetime) < 1 || d.dials.Load() < 2 {
			t.Fatalf("reasons %v, dials %d", why.list, d.dials.Load())
		}
	})
}

func TestIdleReapingKeepsMinIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		const maxIdle = 20 * time.Millisecond
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 4, MinIdle: 1, MaxIdleTime: maxIdle,
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
		})
		var leases []Lease[*fakeConn]
		for i := 0; i < 4; i++ {
			leases = append(leases, mustAcquire(t, p))
		}
		for _, l := range leases {
			l.Release()
		}
		time.Sleep(2 * maxIdle) // past MaxIdleTime and a maintenance tick
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 1 {
			t.Fatalf("%+v after %s idle; want the idle connections reaped down to MinIdle (1)", s, 2*maxIdle)
		}
		if why.count(ReasonIdle) != 3 {
			t.Fatalf("reasons %v, want 3 idle", why.list)
		}
		if s := p.Stats(); s.IdleConns != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestMinIdleKeptInBackgroundAndWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 5, MinIdle: 3})
		synctest.Wait()
		if s := p.Stats(); s.IdleConns != 3 {
			t.Fatalf("%+v; want MinIdle (3) dialled in the background", s)
		}
		// Taking one makes the pool dial another to keep 3 idle, at
		// maintenance's next pass: the fast path that took it does not
		// wake maintenance.
		l := mustAcquire(t, p)
		time.Sleep(maxTick)
		synctest.Wait()
		if s := p.Stats(); s.IdleConns != 3 {
			t.Fatalf("%+v a maintenance tick after one was taken; want MinIdle (3) refilled", s)
		}
		l.Release()

		p2, d2 := newTestPool(t, Config[*fakeConn]{MaxConns: 5, MinIdle: 4})
		if err := p2.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := p2.Stats(); s.TotalConns != 4 || d2.openConns() != 4 {
			t.Fatalf("after Warm: %+v, dialer has %d open", s, d2.openConns())
		}
	})
}

func TestWarmReturnsFirstDialError(t *testing.T) {
	d := &fakeDialer{err: errBoom}
	p, _ := newTestPool(t, Config[*fakeConn]{Dial: d.dial, MaxConns: 3, MinIdle: 2})
	err := p.Warm(context.Background())
	if !errors.Is(err, errBoom) || !errors.Is(err, ErrDial) {
		t.Fatalf("Warm: %v, want the dial error", err)
	}
}

func TestHealthCheckAfterIdleness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		bad := make(map[*fakeConn]bool)
		var mu sync.Mutex
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2, HealthCheckAfter: 10 * time.Millisecond,
			HealthCheck: func(_ context.Context, c *fakeConn) error {
				mu.Lock()
				defer mu.Unlock()
				if bad[c] {
					return errBoom
				}
				return nil
			},
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
		})
		l := mustAcquire(t, p)
		c := l.Value()
		mu.Lock()
		bad[c] = true
		mu.Unlock()
		l.Release()
		// Right away the connection is not checked: it was just in use.
		l = mustAcquire(t, p)
		if l.Value() != c {
			t.Fatal("a fresh connection was checked before HealthCheckAfter")
		}
		l.Release()
		time.Sleep(20 * time.Millisecond)
		l = mustAcquire(t, p)
		synctest.Wait()
		if l.Value() == c || !c.closed.Load() || why.count(ReasonHealth) != 1 {
			t.Fatalf("unhealthy idle connection not replaced: reasons %v", why.list)
		}
		l.Release()
	})
}

// acquireAfterBackoff acquires once the backoff after a first failed dial
// has passed, in a pool that never connected. The server still counts as
// down then: the first caller may get the last dial's error (want) at once
// while its acquire starts the dial that mends it, and once that dial has
// landed an acquire gets its connection. Under testing/synctest.
func acquireAfterBackoff(t *testing.T, p *Pool[*fakeConn], want error) Lease[*fakeConn] {
	t.Helper()
	time.Sleep(failrun.BackoffMin)
	l, err := p.Acquire(context.Background())
	if err == nil {
		return l
	}
	if !errors.Is(err, want) {
		t.Fatalf("acquire after the backoff: %v, want a connection or the last dial's error", err)
	}
	synctest.Wait()
	return mustAcquire(t, p)
}

func TestHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		rejectNext := make(chan bool, 10)
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2,
			Hooks: Hooks[*fakeConn]{
				OnConnect: func(_ context.Context, c *fakeConn) error {
					if c.id == 1 {
						return errBoom
					}
					return nil
				},
				BeforeAcquire: func(_ context.Context, c *fakeConn) bool {
					select {
					case r := <-rejectNext:
						return !r
					default:
						return true
					}
				},
				AfterRelease: func(c *fakeConn) bool { return c.id != 3 },
				OnDisconnect: why.hook,
			},
		})
		// Connection 1 fails OnConnect, a failed dial: the pool has never
		// connected, so the caller gets the error at once; the next try,
		// after the backoff, dials connection 2, which is fine.
		if _, err := p.Acquire(context.Background()); !errors.Is(err, errBoom) || !errors.Is(err, ErrDial) {
			t.Fatalf("first acquire: %v, want OnConnect's error as a failed dial", err)
		}
		first := acquireAfterBackoff(t, p, errBoom)
		if first.Value().id != 2 {
			t.Fatalf("got conn %d, want 2 after connection 1 failed OnConnect", first.Value().id)
		}
		first.Release()
		synctest.Wait()
		if d.conns[0].closed.Load() != true {
			t.Fatal("connection rejected by OnConnect was not closed")
		}
		// BeforeAcquire rejects connection 2 once: a new one (3) is dialled.
		rejectNext <- true
		l := mustAcquire(t, p)
		if l.Value().id != 3 {
			t.Fatalf("got conn %d, want 3", l.Value().id)
		}
		// AfterRelease refuses connection 3: it is closed.
		l.Release()
		synctest.Wait()
		if !l.rec.c.value.closed.Load() {
			t.Fatal("AfterRelease false did not close the connection")
		}
		if why.count(ReasonRejected) != 3 {
			t.Fatalf("reasons %v, want 3 rejected", why.list)
		}
		if s := p.Stats(); s.TotalConns != 0 || s.DialErrors != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestPanicsKeepCountsRight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mode sync.Map
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2,
			Dial: func(ctx context.Context) (*fakeConn, error) {
				if _, ok := mode.Load("dial"); ok {
					panic("dial exploded")
				}
				return &fakeConn{}, nil
			},
			Close: func(c *fakeConn) error { panic("close exploded") },
			Hooks: Hooks[*fakeConn]{
				AfterRelease: func(*fakeConn) bool {
					if _, ok := mode.Load("after"); ok {
						panic("hook exploded")
					}
					return true
				},
			},
		})
		mode.Store("dial", true)
		_, err := p.Acquire(context.Background())
		if err == nil || !errors.Is(err, ErrDial) {
			t.Fatalf("got %v, want a dial error", err)
		}
		var pe *panicError
		if !errors.As(err, &pe) {
			t.Fatalf("got %v, want the panic as an error", err)
		}
		mode.Delete("dial")
		l := acquireAfterBackoff(t, p, pe)
		mode.Store("after", true)
		l.Release() // the hook panics: treated as "no", and Close panics too
		synctest.Wait()
		s := p.Stats()
		if s.TotalConns != 0 || s.Closed != 1 || s.InUseConns != 0 {
			t.Fatalf("stats %+v", s)
		}
		mode.Delete("after")
		l = mustAcquire(t, p)
		l.Release()
	})
}

// Warm also waits for the MinIdle dials the maintenance goroutine started
// before it was called.
func TestWarmWaitsForBackgroundDials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{block: make(chan struct{})}
		p, _ := newTestPool(t, Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 4, MinIdle: 3, MaxDialing: 4})
		synctest.Wait()
		if n := d.dials.Load(); n != 3 {
			t.Fatalf("%d background dials started, want MinIdle (3)", n)
		}
		warmed := make(chan error, 1)
		go func() { warmed <- p.Warm(context.Background()) }()
		synctest.Wait() // Warm is waiting, or has returned
		select {
		case err := <-warmed:
			t.Fatalf("Warm returned (%v) while its connections were still dialling", err)
		default:
		}
		close(d.block)
		if err := <-warmed; err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.TotalConns != 3 {
			t.Fatalf("after Warm: %+v", s)
		}
	})
}

// TestFullPoolWaitsDoNotWakeMaintenance: with MinIdle set, an acquire that
// finds nothing idle wakes the maintenance goroutine to refill, but only
// while the pool has room to dial. At MaxConns a pass can do nothing, and
// one per waiting acquire cost a busy pool a goroutine wake-up and a scan of
// every connection each time.
func TestFullPoolWaitsDoNotWakeMaintenance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MinIdle: 2})
		if err := p.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		defer a.Release()
		defer b.Release()
		synctest.Wait() // maintenance has run the passes it was woken for
		before := p.life.passes.Load()
		const waits = 100
		for range waits {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Microsecond)
			if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire on a full pool: %v, want a deadline error", err)
			}
			cancel()
		}
		// The waits take 20ms of the fake clock, well within maintenance's
		// tick (a second here): any pass in that time was woken by a wait.
		if n := p.life.passes.Load() - before; n != 0 {
			t.Fatalf("%d waiting acquires on a full pool ran %d maintenance passes", waits, n)
		}
	})
}

// TestLifetimeNearMaxInt64MeansForever: a MaxLifetime of math.MaxInt64 (a
// common way to write "for ever"), with or without a jitter as long, gives
// connections that live, not ones expired on arrival, and no panic in the
// dial that draws the jitter.
func TestLifetimeNearMaxInt64MeansForever(t *testing.T) {
	for _, jitter := range []time.Duration{0, math.MaxInt64} {
		var r reasons
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1,
			MaxLifetime: math.MaxInt64, LifetimeJitter: jitter,
			Hooks: Hooks[*fakeConn]{OnDisconnect: r.hook}})
		for range 3 {
			mustAcquire(t, p).Release()
		}
		if s := p.Stats(); s.Dials != 1 || r.count(ReasonLifetime) != 0 {
			t.Errorf("jitter %v: %d dials and %d lifetime closes for 3 acquires, want 1 and 0", jitter, s.Dials, r.count(ReasonLifetime))
		}
	}
}

// TestExpiredContextDoesNotFailHealthChecks: an acquire whose deadline
// passes during a health check does not blame the connection, nor go on to
// check (and close) every other idle one: they stay open and idle.
func TestExpiredContextDoesNotFailHealthChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 8, HealthCheckAfter: time.Millisecond,
			HealthCheck: func(ctx context.Context, _ *fakeConn) error {
				select {
				case <-ctx.Done(): // a ping needs time the caller no longer has
					return ctx.Err()
				case <-time.After(20 * time.Millisecond):
					return nil
				}
			}})
		var held []Lease[*fakeConn]
		for range 8 {
			held = append(held, mustAcquire(t, p))
		}
		for _, l := range held {
			l.Release()
		}
		time.Sleep(5 * time.Millisecond) // past HealthCheckAfter: the next take checks
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		defer cancel()
		if l, err := p.Acquire(ctx); err == nil {
			l.Release()
			t.Fatal("Acquire succeeded although every health check outlasts its deadline")
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire: %v, want DeadlineExceeded", err)
		}
		if s := p.Stats(); s.Closed != 0 || s.IdleConns != 8 {
			t.Errorf("after one acquire timed out in a health check: %d closed, %d idle; want 0 and 8", s.Closed, s.IdleConns)
		}
	})
}

// A connection past MaxLifetime closes as it is released, exclusive or
// multiplexed, without waiting for maintenance: the lifetime ends between
// two of its ticks.
func TestLifetimeClosesAtRelease(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: streams, MaxLifetime: time.Minute})
				time.Sleep(500 * time.Millisecond) // the lifetime ends between maintenance ticks (every 1s)
				l := mustAcquire(t, p)
				time.Sleep(time.Minute + 200*time.Millisecond)
				synctest.Wait()
				l.Release()
				synctest.Wait()
				if s := p.Stats(); s.TotalConns != 0 || d.closes.Load() != 1 {
					t.Errorf("MaxStreams %d: after release past lifetime: %d open, %d closed; want 0, 1", streams, s.TotalConns, d.closes.Load())
				}
			})
		})
	}
}

// A BeforeAcquire that panics counts as one that said no: the caller gets
// another connection.
func TestBeforeAcquireThatPanicsSaidNo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var boom atomic.Bool
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, Hooks: Hooks[*fakeConn]{
			BeforeAcquire: func(_ context.Context, c *fakeConn) bool {
				if boom.Load() && c.id == 1 {
					panic("hook exploded")
				}
				return true
			}}})
		mustAcquire(t, p).Release()
		boom.Store(true)
		l := mustAcquire(t, p)
		if l.Value().id == 1 {
			t.Errorf("got the connection whose BeforeAcquire panicked")
		}
		l.Release()
	})
}

// OnDisconnect runs with the reason before Close.
func TestOnDisconnectRunsBeforeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1,
			Close: func(*fakeConn) error { mu.Lock(); order = append(order, "close"); mu.Unlock(); return nil },
			Hooks: Hooks[*fakeConn]{OnDisconnect: func(*fakeConn, Reason) { mu.Lock(); order = append(order, "ondisconnect"); mu.Unlock() }}})
		mustAcquire(t, p).Discard()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(order) != 2 || order[0] != "ondisconnect" {
			t.Errorf("order %v, want OnDisconnect then Close", order)
		}
	})
}

// A Warm whose own context ends while its dial connects is its caller
// giving up, not the server failing: on a pool never connected, the next
// Acquire waits for the pool's next dial instead of failing at once with
// Warm's context error. The first (background) dial is refused by a fence
// (ErrPermitRefused), which counts nothing towards the server being down
// but holds the background dials back for the backoff: so Warm, not
// maintenance, makes the dial its context cuts short.
func TestWarmCutShortIsNoDialFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dials atomic.Int32
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MinIdle: 1,
			Dial: func(ctx context.Context) (*fakeConn, error) {
				if dials.Add(1) == 1 {
					return nil, fmt.Errorf("slot held: %w", ErrPermitRefused)
				}
				select { // a server that takes 50ms to accept
				case <-time.After(50 * time.Millisecond):
					return &fakeConn{}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}})
		synctest.Wait() // the first dial was refused; the pool backs off
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer wcancel()
		if err := p.Warm(wctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Warm cut short: %v", err)
		}
		if n := dials.Load(); n != 2 {
			t.Fatalf("%d dials before the Acquire, want the refused one and Warm's", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		l, err := p.Acquire(ctx)
		if err != nil {
			t.Fatalf("Acquire with 1s left after Warm gave up: %v", err)
		}
		l.Release()
	})
}

// Warm holds its dials to MaxDialing together with the pool's own: with
// the floor's background dials in flight at MaxDialing, it starts none
// until one ends.
func TestWarmKeepsToMaxDialing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight, peak atomic.Int32
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 8, MinIdle: 8, MaxDialing: 2,
			Dial: func(ctx context.Context) (*fakeConn, error) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
				}
				select {
				case <-time.After(50 * time.Millisecond):
					return &fakeConn{}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}})
		synctest.Wait() // the floor's first two dials are in flight
		if n := inFlight.Load(); n != 2 {
			t.Fatalf("%d background dials in flight, want MaxDialing (2)", n)
		}
		if err := p.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := peak.Load(); got != 2 {
			t.Errorf("at most %d dials in flight at once, want MaxDialing (2)", got)
		}
		if s := p.Stats(); s.TotalConns != 8 {
			t.Errorf("after Warm: %+v, want 8 connections", s)
		}
	})
}

// TestExpiredContextDoesNotFailMultiplexedChecks is
// TestExpiredContextDoesNotFailHealthChecks for multiplexed connections: an
// acquire whose deadline passes during the health check of an idle
// connection does not retire it.
func TestExpiredContextDoesNotFailMultiplexedChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 4, HealthCheckAfter: time.Millisecond,
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
			HealthCheck: func(ctx context.Context, _ *fakeConn) error {
				select {
				case <-ctx.Done(): // a ping needs time the caller no longer has
					return ctx.Err()
				case <-time.After(20 * time.Millisecond):
					return nil
				}
			}})
		mustAcquire(t, p).Release()
		time.Sleep(5 * time.Millisecond) // past HealthCheckAfter: the next take checks
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		defer cancel()
		if l, err := p.Acquire(ctx); err == nil {
			l.Release()
			t.Fatal("Acquire succeeded although the health check outlasts its deadline")
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire: %v, want DeadlineExceeded", err)
		}
		synctest.Wait()
		if s := p.Stats(); s.Closed != 0 || s.IdleConns != 1 {
			t.Errorf("after one acquire timed out in a health check: %d closed (%v), %d idle; want 0 and 1", s.Closed, why.list, s.IdleConns)
		}
	})
}
