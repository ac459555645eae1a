package shoal

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// poolMachine drives a pool through random acquires, tries, releases,
// double releases, discards, cancellations and a close, and checks after
// every step that the pool's promises hold and its Stats add up.
type poolMachine struct {
	p        *Pool[*fakeConn]
	d        *fakeDialer
	maxConns int // the limit now: Config.MaxConns, then SetMaxConns's
	// allowed is the most connections that may be open: the limit, or after
	// a shrink the largest limit set since the pool was last within its
	// limit (what was open then closes as leases come back).
	allowed    int
	maxStreams int
	minConns   int
	held       []Lease[*fakeConn]
	acquires   int64
	hijacked   int // connections taken out by Hijack and closed by the model
	closed     bool
	stale      []Lease[*fakeConn] // the last leases released or discarded, whatever became of their connections since
	retired    map[*fakeConn]bool // multiplexed conns discarded while other leases remain
	// preShrink holds the leases held when the limit last fell, in
	// multiplexed mode: while one is held, the connection it is on may be
	// retiring, and whether an acquire must wait is not the model's to say.
	preShrink map[Lease[*fakeConn]]bool
}

func newPoolMachine(t *rapid.T) *poolMachine {
	m := &poolMachine{
		maxConns:   rapid.IntRange(1, 4).Draw(t, "maxConns"),
		maxStreams: rapid.SampledFrom([]int{1, 1, 3}).Draw(t, "maxStreams"),
		d:          &fakeDialer{},
		retired:    map[*fakeConn]bool{},
		preShrink:  map[Lease[*fakeConn]]bool{},
	}
	m.allowed = m.maxConns
	m.minConns = rapid.IntRange(0, m.maxConns).Draw(t, "minConns")
	var bargeWindow time.Duration
	partitions := 0
	if m.maxStreams == 1 { // both apply to exclusive connections only
		bargeWindow = rapid.SampledFrom([]time.Duration{0, time.Millisecond}).Draw(t, "bargeWindow")
		partitions = rapid.IntRange(0, 3).Draw(t, "partitions")
	}
	p, err := New(Config[*fakeConn]{
		Dial: m.d.dial, Close: m.d.close,
		MaxConns: m.maxConns, MaxStreams: m.maxStreams,
		Partitions:  partitions,
		BargeWindow: bargeWindow,
		MinConns:    m.minConns,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.p = p
	return m
}

// full reports whether no stream can be had: every stream of every
// connection that may still take leases is held. A multiplexed connection
// that was discarded takes no new leases but holds its place in MaxConns
// until its other leases end.
func (m *poolMachine) full() bool {
	if m.maxStreams == 1 {
		// Discarded and shrunk-away connections close at once.
		return len(m.held) >= m.maxConns
	}
	retiredOpen := map[*fakeConn]bool{}
	live := 0
	for _, l := range m.held {
		if m.retired[l.Value()] {
			retiredOpen[l.Value()] = true
		} else {
			live++
		}
	}
	return live >= (m.maxConns-len(retiredOpen))*m.maxStreams
}

// settle waits until no background work is left that could change the
// pool's counts under the model: no dial in flight, every reserved place
// in MaxConns an open connection, MinConns met while the pool is open, and
// after Close the maintenance goroutine gone (a pass that began before
// Close may still start one last dial, which the pool closes on arrival).
// The machine runs on real time, to race the pool's goroutines for real.
func (m *poolMachine) settle(t *rapid.T) {
	if m.closed {
		select {
		case <-m.p.life.maintDone:
		case <-time.After(10 * time.Second):
			t.Fatalf("maintenance still running 10s after Close")
		}
	}
	WaitFor(t, "background dials settled (no dial in flight, every place taken an open connection, MinConns met)", func() bool {
		open := int(m.p.cap.open.Load())
		s := m.p.Stats()
		return s.Dialing == 0 && open == s.TotalConns && (m.closed || open >= min(m.minConns, m.maxConns))
	})
	// The count of connections up, which failing waiters relies on, is
	// kept apart from open, dialing and closing: once the pool is settled
	// it must agree with them.
	WaitFor(t, "connections up = open - dialing - closing", func() bool {
		c := &m.p.cap
		return c.up.Load() == c.open.Load()-c.dialing.Load()-c.closing.Load()
	})
}

func (m *poolMachine) Acquire(t *rapid.T) {
	if len(m.preShrink) > 0 && !m.closed {
		// A retiring connection may or may not have room: either answer
		// is right, a wait until the deadline included.
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if l, err := m.p.Acquire(ctx); err == nil {
			m.took(l)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire after a shrink: %v", err)
		}
		return
	}
	if m.full() || m.closed {
		t.Skip("would block")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := m.p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire with room: %v", err)
	}
	m.took(l)
}

func (m *poolMachine) TryAcquire(t *rapid.T) {
	if m.closed {
		t.Skip("closed")
	}
	m.settle(t)
	l, err := m.p.TryAcquire()
	if err != nil {
		if !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquire: %v", err)
		}
		return
	}
	m.took(l)
}

func (m *poolMachine) AcquireWhenFull(t *rapid.T) {
	if !m.full() || m.closed || len(m.preShrink) > 0 {
		t.Skip("not full")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if l, err := m.p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full pool: %v, %v", l, err)
	}
}

func (m *poolMachine) AcquireCanceled(t *rapid.T) {
	if m.closed {
		t.Skip("closed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := m.p.Acquire(ctx)
	if err == nil {
		m.took(l) // an idle connection may be handed out at once
		return
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Acquire: %v", err)
	}
}

func (m *poolMachine) took(l Lease[*fakeConn]) {
	m.acquires++
	m.held = append(m.held, l)
	if m.retired[l.Value()] {
		panic("a lease was handed out on a discarded connection")
	}
}

func (m *poolMachine) pick(t *rapid.T) Lease[*fakeConn] {
	if len(m.held) == 0 {
		t.Skip("nothing held")
	}
	i := rapid.IntRange(0, len(m.held)-1).Draw(t, "lease")
	l := m.held[i]
	m.held = append(m.held[:i], m.held[i+1:]...)
	delete(m.preShrink, l)
	return l
}

func (m *poolMachine) SetMaxConns(t *rapid.T) {
	if m.closed {
		t.Skip("closed")
	}
	n := rapid.IntRange(1, 6).Draw(t, "n")
	if err := m.p.SetMaxConns(n); err != nil {
		t.Fatalf("SetMaxConns(%d): %v", n, err)
	}
	if n < m.maxConns && m.maxStreams > 1 {
		for _, l := range m.held {
			m.preShrink[l] = true
		}
	}
	m.maxConns = n
	m.allowed = max(m.allowed, n)
}

func (m *poolMachine) Release(t *rapid.T) {
	l := m.pick(t)
	l.Release()
	m.freed(l)
}

func (m *poolMachine) Discard(t *rapid.T) {
	l := m.pick(t)
	m.retired[l.Value()] = true
	l.Discard()
	m.freed(l)
}

// Hijack takes a connection out of the pool for good and closes it, as
// its new owner would. Exclusive mode only: a multiplexed connection's
// Hijack depends on its other leases.
func (m *poolMachine) Hijack(t *rapid.T) {
	if m.maxStreams != 1 {
		t.Skip("multiplexed")
	}
	l := m.pick(t)
	c, err := l.Hijack()
	if err != nil {
		t.Fatalf("Hijack: %v", err)
	}
	m.retired[c] = true
	m.hijacked++
	if err := m.d.close(c); err != nil {
		t.Fatal(err)
	}
	m.freed(l)
}

// freed keeps l, just released or discarded, for ReleaseStale.
func (m *poolMachine) freed(l Lease[*fakeConn]) {
	m.stale = append(m.stale, l)
	if len(m.stale) > 4 {
		m.stale = m.stale[1:]
	}
}

// ReleaseStale calls Release, Discard and Hijack on a lease already
// released or discarded, perhaps after its connection went to a new holder:
// the pool must not change.
func (m *poolMachine) ReleaseStale(t *rapid.T) {
	if len(m.stale) == 0 {
		t.Skip("nothing released yet")
	}
	l := m.stale[rapid.IntRange(0, len(m.stale)-1).Draw(t, "stale")]
	before := m.p.Stats()
	l.Release()
	l.Discard()
	if _, err := l.Hijack(); !errors.Is(err, ErrLeaseReleased) {
		t.Fatalf("stale Hijack: %v, want ErrLeaseReleased", err)
	}
	after := m.p.Stats()
	if after.Closed != before.Closed || after.IdleConns != before.IdleConns || after.Leases != before.Leases {
		t.Fatalf("a stale Release changed the pool: %+v -> %+v", before, after)
	}
}

func (m *poolMachine) Close(t *rapid.T) {
	if m.closed {
		t.Skip("closed")
	}
	m.closed = true
	// With leases out Close cannot finish: give it a moment only.
	wait := 10 * time.Second
	if len(m.held) > 0 {
		wait = time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := m.p.Close(ctx)
	if len(m.held) == 0 && err != nil {
		t.Fatalf("Close with nothing held: %v", err)
	}
	if _, err := m.p.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

func (m *poolMachine) AcquireAfterClose(t *rapid.T) {
	if !m.closed {
		t.Skip("open")
	}
	if _, err := m.p.TryAcquire(); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryAcquire after Close: %v", err)
	}
}

// Check is run after every step.
func (m *poolMachine) Check(t *rapid.T) {
	m.settle(t)
	s := m.p.Stats()
	if s.TotalConns > m.allowed {
		t.Fatalf("%d connections open, MaxConns %d, %d allowed since the last shrink", s.TotalConns, m.maxConns, m.allowed)
	}
	if s.MaxConns != m.maxConns {
		t.Fatalf("Stats.MaxConns %d, set %d", s.MaxConns, m.maxConns)
	}
	if m.maxStreams == 1 && s.TotalConns > m.maxConns && s.IdleConns > 0 && !m.closed {
		// (A multiplexed pool keeps the connections it did not retire,
		// idle or not, while the retired ones finish their leases.)
		t.Fatalf("%d idle connections kept with %d open above MaxConns %d", s.IdleConns, s.TotalConns, m.maxConns)
	}
	if len(m.held) == 0 && s.TotalConns > m.maxConns {
		t.Fatalf("no lease out, and %d connections open above MaxConns %d", s.TotalConns, m.maxConns)
	}
	if s.TotalConns <= m.maxConns {
		m.allowed = m.maxConns
	}
	perConn := map[*fakeConn]int{}
	for _, l := range m.held {
		c := l.Value()
		perConn[c]++
		if c.closed.Load() {
			t.Fatalf("held lease on a closed connection %d", c.id)
		}
		if perConn[c] > m.maxStreams {
			t.Fatalf("connection %d has %d leases, MaxStreams %d", c.id, perConn[c], m.maxStreams)
		}
	}
	if s.Leases != len(m.held) || s.InUseConns != len(perConn) {
		t.Fatalf("Stats say %d leases on %d conns; the model holds %d on %d", s.Leases, s.InUseConns, len(m.held), len(perConn))
	}
	if s.TotalConns != s.IdleConns+s.InUseConns {
		t.Fatalf("Total %d != Idle %d + InUse %d", s.TotalConns, s.IdleConns, s.InUseConns)
	}
	if s.Acquires != m.acquires {
		t.Fatalf("Acquires = %d, model %d", s.Acquires, m.acquires)
	}
	if open := m.d.openConns(); open != s.TotalConns {
		t.Fatalf("dialer has %d open connections, Stats %d (%+v)", open, s.TotalConns, s)
	}
	// The pool does not count the closes of connections it let go to Hijack.
	if s.Closed+int64(m.hijacked) != int64(m.d.closes.Load()) || s.Dials != int64(m.d.dials.Load()) {
		t.Fatalf("Stats closed/dials %d/%d (and %d hijacked), dialer %d/%d", s.Closed, s.Dials, m.hijacked, m.d.closes.Load(), m.d.dials.Load())
	}
	if s.Waiting != 0 {
		t.Fatalf("%d waiting with no caller blocked", s.Waiting)
	}
}

func (m *poolMachine) cleanup(t *rapid.T) {
	for _, l := range m.held {
		l.Release()
	}
	m.held = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.p.Close(ctx); err != nil {
		t.Fatalf("final Close: %v", err)
	}
	if open := m.d.openConns(); open != 0 {
		t.Fatalf("%d connections left open after Close", open)
	}
}

func TestPoolStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newPoolMachine(t)
		defer m.cleanup(t)
		t.Repeat(rapid.StateMachineActions(m))
	})
}
