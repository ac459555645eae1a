package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// slotBudget is an in-process shoal.Budget of fixed slots with a fence key,
// standing in for shoaletcd so that these tests check shoalpgx's side
// alone: permits before dials, and the fence at the server.
type slotBudget struct {
	key     int32
	suspect bool // every permit says its slot is suspect
	mu      sync.Mutex
	free    []int
	changed chan struct{}
	fenced  atomic.Int32 // Fenced calls
}

func newSlotBudget(key int32, slots ...int) *slotBudget {
	return &slotBudget{key: key, free: slots, changed: make(chan struct{})}
}

func (b *slotBudget) FenceKey() int32 { return b.key }

// freeSlots counts the slots no permit holds.
func (b *slotBudget) freeSlots() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.free)
}

func (b *slotBudget) Join(m shoal.BudgetMember) (func(), error) { return func() {}, nil }

func (b *slotBudget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	for {
		b.mu.Lock()
		if n := len(b.free); n > 0 {
			slot := b.free[0]
			b.free = b.free[1:]
			b.mu.Unlock()
			return &slotPermit{b: b, slot: slot, suspect: b.suspect}, nil
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

type slotPermit struct {
	b       *slotBudget
	slot    int
	suspect bool
}

func (p *slotPermit) Slot() int     { return p.slot }
func (p *slotPermit) Suspect() bool { return p.suspect }
func (p *slotPermit) Fenced()       { p.b.fenced.Add(1) }
func (p *slotPermit) Release() {
	b := p.b
	b.mu.Lock()
	b.free = append(b.free, p.slot) // to the back: a refused slot is tried last
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// fenceKeyFor gives each test a fence key of its own, so that tests running
// against the same server never share locks.
func fenceKeyFor(t *testing.T) int32 {
	h := int32(17)
	for _, r := range t.Name() {
		h = h*31 + r
	}
	return h & 0x7fffffff
}

// lockedSlots lists the slots of key whose advisory locks are held now.
func lockedSlots(t *testing.T, ctx context.Context, key int32) []int32 {
	t.Helper()
	rows, err := pgtest.AdminConn(t).Query(ctx, `SELECT objid::int8::int4 FROM pg_locks
		WHERE locktype = 'advisory' AND classid = $1::int4::oid AND objsubid = 2 AND granted ORDER BY 1`, key)
	if err != nil {
		t.Fatal(err)
	}
	var slots []int32
	for rows.Next() {
		var s int32
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return slots
}

func TestBudgetFencesEveryConnectionWithItsSlotsLock(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	b := newSlotBudget(key, 0, 1, 2)
	p := newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 3; c.MinConns = 3 })
	var conns []*Conn
	for range 3 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if got := lockedSlots(t, ctx, key); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("locked slots %v, want [0 1 2]", got)
	}
	// A query on a fenced connection works as usual.
	var one int
	if err := conns[0].QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 on a fenced connection: %d, %v", one, err)
	}
	for _, c := range conns {
		c.Release()
	}
	p.Close()
	// The locks die with the backends.
	deadline := time.Now().Add(10 * time.Second)
	for len(lockedSlots(t, ctx, key)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("locks still held after Close: %v", lockedSlots(t, ctx, key))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBudgetFenceRefusesASlotAnotherSessionHolds(t *testing.T) {
	fenceRefusesASlotAnotherSessionHolds(t, fenceKeyFor(t))
}

// fenceRefusesASlotAnotherSessionHolds is
// TestBudgetFenceRefusesASlotAnotherSessionHolds for a given fence key.
func fenceRefusesASlotAnotherSessionHolds(t *testing.T, key int32) {
	ctx := pgtest.Ctx(t)
	// A "paused process": another session holds slot 0's lock.
	s := newFenceScene(t, key, 0)
	b := newSlotBudget(key, 0)
	p := newTestPool(t, s.pool(b, func(c *Config) { c.MaxConns = 1 }))
	// The refused dial is one failure, not a server that is down: the
	// caller waits for the next try until its context ends, here once a
	// second dial was refused (the first is then the pool's last dial
	// error), and its error names the fence.
	short, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer cancel()
		for p.Stat().Shoal().DialErrors < 2 && short.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := p.Acquire(short)
	var ae *shoal.AcquireError
	if !errors.Is(err, ErrSlotFenced) && !(errors.As(err, &ae) && errors.Is(ae.LastDial, ErrSlotFenced)) {
		t.Fatalf("Acquire with slot 0 held elsewhere: %v, want ErrSlotFenced", err)
	}
	if !errors.Is(err, shoal.ErrPermitRefused) && !(ae != nil && errors.Is(ae.LastDial, shoal.ErrPermitRefused)) {
		t.Fatalf("the fenced dial's error %v does not wrap shoal.ErrPermitRefused", err)
	}
	// It says which lock, as pg_locks shows it, for finding its holder;
	// the query it suggests finds the stale session.
	want := fmt.Sprintf("pg_locks: locktype 'advisory', classid %d, objid 0, objsubid 2", uint32(key))
	if !strings.Contains(err.Error(), want) {
		t.Errorf("the fenced dial's error %q does not say %q", err, want)
	}
	var holders int
	if err := s.stale.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objid = 0 AND objsubid = 2 AND pid = pg_backend_pid()", int64(uint32(key))).Scan(&holders); err != nil || holders != 1 {
		t.Errorf("pg_locks as the error says it: %d rows for the stale session, %v; want 1", holders, err)
	}
	if b.fenced.Load() == 0 {
		t.Fatal("the budget was not told that its slot was refused")
	}
	if st := p.Stat().Shoal(); st.TotalConns != 0 {
		t.Fatalf("a refused connection stayed in the pool: %+v", st)
	}
	// Once the stale session lets go, the slot is usable.
	if _, err := s.stale.Exec(ctx, "SELECT pg_advisory_unlock($1, 0)", key); err != nil {
		t.Fatal(err)
	}
	// (After the backoff of the refused dial: a few tries at most.)
	for try := 0; ; try++ {
		c, err := p.Acquire(ctx)
		if err == nil {
			c.Release()
			break
		}
		if !errors.Is(err, ErrSlotFenced) || try == 100 {
			t.Fatalf("Acquire after the stale session let go: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A refused slot is not a server that is down: callers with time left wait
// for the dial with the budget's next slot and are served, in a pool that
// has not connected yet as in one that has (where a run of failed dials
// fails every waiter at once).
func TestBudgetFencedSlotIsWaitedOut(t *testing.T) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, fenceKeyFor(t), 0)
	b := newSlotBudget(s.key, 0, 1)
	p := newTestPool(t, s.pool(b, func(c *Config) { c.MaxConns = 1 }))
	const callers = 4
	errs := make(chan error, callers)
	for range callers {
		go func() {
			c, err := p.Acquire(ctx)
			if err == nil {
				c.Release()
			}
			errs <- err
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Fatalf("a caller with time left failed on a fenced slot: %v", err)
		}
	}
	if b.fenced.Load() == 0 {
		t.Fatal("slot 0 was never tried: the test proves nothing")
	}
	if st := p.Stat().Shoal(); st.FailedAcquires != 0 {
		t.Fatalf("%d failed acquires, want none", st.FailedAcquires)
	}
}

func TestBudgetFenceLooksBeforeItDials(t *testing.T) {
	fenceLooksBeforeItDials(t, fenceKeyFor(t), 0)
}

// fenceLooksBeforeItDials is TestBudgetFenceLooksBeforeItDials for a given
// fence key and Pipeline (0 leaves it to SHOAL_TEST_PIPELINE).
func fenceLooksBeforeItDials(t *testing.T, key int32, pipeline int) {
	ctx := pgtest.Ctx(t)
	s := newFenceScene(t, key, 1)
	b := newSlotBudget(key, 0, 1)
	b.suspect = true // a slot whose holder's lease ended: worth a wait to look
	p := newTestPool(t, s.pool(b, func(c *Config) {
		c.MaxConns = 2
		c.Pipeline = pipeline
	}))
	first, err := p.Acquire(ctx) // slot 0: no one else has it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Release) // a no-op once released; else Close would wait for it
	// A second caller makes the pool dial with slot 1. That dial first
	// borrows one of the pool's own connections to look at the server's
	// locks, so it queues behind the caller.
	done := make(chan error, 1)
	go func() {
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := p.Acquire(short)
		if err == nil {
			c.Release()
		}
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stat().Shoal().Waiting < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the dial never borrowed a connection: %+v", p.Stat().Shoal())
		}
		time.Sleep(time.Millisecond)
	}
	first.Release() // to the caller, then to the dial's look
	if err := <-done; err != nil {
		t.Fatalf("the second caller failed; the first connection was there for it: %v", err)
	}
	for b.fenced.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the budget was never told that slot 1 was refused")
		}
		time.Sleep(time.Millisecond)
	}
	if n := s.connects.Load(); n != 1 {
		t.Fatalf("%d connects; the refused slot must cost none", n)
	}
}

func TestBudgetBoundsConnectionsAtTheServer(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	b := newSlotBudget(key, 0, 1, 2)
	name := pgtest.AppName(t)
	var pools []*Pool
	for range 2 {
		pools = append(pools, newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 3 }))
	}
	admin := pgtest.AdminConn(t)
	var most atomic.Int32
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			var n int32
			if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n); err != nil {
				t.Error(err)
				return
			}
			if n > most.Load() {
				most.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	// This budget has no shares (shoaletcd's move idle connections to the
	// pool that needs them): a pool that is done closes, so that its
	// permits pass to the other.
	var all sync.WaitGroup
	for _, p := range pools {
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				for i := range 60 {
					c, err := p.Acquire(ctx)
					if err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
					_, err = c.Exec(ctx, "SELECT pg_sleep(0.001)")
					if err != nil {
						t.Errorf("Exec: %v", err)
					}
					if i%20 == 0 {
						c.Conn().Close(ctx) // a broken connection: its slot moves on
					}
					c.Release()
				}
			})
		}
		all.Go(func() {
			wg.Wait()
			p.Close()
		})
	}
	all.Wait()
	close(stop)
	sampler.Wait()
	if m := most.Load(); m > 3 || m == 0 {
		t.Fatalf("at most %d connections seen at the server under a budget of 3", m)
	}
}

// TestBudgetFenceWaitsOutAClosingHolder: a slot's lock outlives its
// connection by the moment the server takes to end the backend; a dial in
// that moment must get the slot, not be refused.
func TestBudgetFenceWaitsOutAClosingHolder(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	closing := pgtest.AdminConn(t)
	if _, err := closing.Exec(ctx, "SELECT pg_advisory_lock($1, 0)", key); err != nil {
		t.Fatal(err)
	}
	b := newSlotBudget(key, 0)
	p := newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 1 })
	let := make(chan struct{})
	go func() {
		defer close(let)
		time.Sleep(20 * time.Millisecond) // well within fenceGrace
		closing.Exec(context.Background(), "SELECT pg_advisory_unlock($1, 0)", key)
	}()
	defer func() { <-let }()
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire while the slot's last holder lets go: %v", err)
	}
	c.Release()
	if b.fenced.Load() != 0 {
		t.Fatal("a slot its holder was letting go of was reported fenced")
	}
}

// TestBudgetFenceDoesNotWaitForAPlainSlot: a slot that is not suspect is
// looked at only through an idle connection; a dial never queues for one,
// which would count as a caller waiting in the pool's demand.
func TestBudgetFenceDoesNotWaitForAPlainSlot(t *testing.T) {
	ctx := pgtest.Ctx(t)
	key := fenceKeyFor(t)
	b := newSlotBudget(key, 0, 1)
	p := newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 2 })
	first, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	second, err := p.Acquire(ctx) // dials slot 1 while first is held
	if err != nil {
		t.Fatal(err)
	}
	second.Release()
	if s := p.Stat().Shoal(); s.WaitedAcquires > 2 || s.Acquires != 2 {
		t.Fatalf("the dial borrowed a connection for a plain slot: %+v", s)
	}
}

// TestBudgetedCloseWaitsForTheBackend: a budgeted pool gives a permit back
// when its connection's Close returns, so Close must return only once the
// server has ended the backend; otherwise another process given the permit
// would make the server count one above the budget for a moment. The check
// runs the moment the permit is back.
func TestBudgetedCloseWaitsForTheBackend(t *testing.T) {
	ctx := pgtest.Ctx(t)
	b := newSlotBudget(fenceKeyFor(t), 0)
	p := newTestPool(t, func(c *Config) { c.Budget = b; c.MaxConns = 1 })
	admin := pgtest.AdminConn(t)
	for i := range 20 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pid := backendPID(t, c)
		c.Release()
		p.Reset() // closes the idle connection in the background
		// The permit comes back once the connection's Close returns.
		deadline := time.Now().Add(10 * time.Second)
		for b.freeSlots() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the permit did not come back after Reset", i)
			}
			time.Sleep(time.Millisecond)
		}
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("round %d: backend %d still at the server after its connection's close returned", i, pid)
		}
	}
}
