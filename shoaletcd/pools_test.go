package shoaletcd

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
	"github.com/shoalpool/shoal/internal/etcdtest"
)

// countingDial is a Dial of ints that counts the connections open across
// every pool it serves and records the most at once.
type countingDial struct {
	open, most atomic.Int32
}

func (d *countingDial) dial(ctx context.Context) (int, error) {
	n := d.open.Add(1)
	for m := d.most.Load(); n > m && !d.most.CompareAndSwap(m, n); m = d.most.Load() {
	}
	return int(n), nil
}

func (d *countingDial) close(int) error { d.open.Add(-1); return nil }

// holdLeases keeps n callers of p holding a lease each (or waiting for
// one) until the returned stop is called.
func holdLeases(p *shoal.Pool[int], n int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			l, err := p.Acquire(ctx)
			if err != nil {
				return
			}
			<-ctx.Done()
			l.Release()
		})
	}
	return func() { cancel(); wg.Wait() }
}

// poolsOf describes a member's pools as "name share/held, ...".
func poolsOf(b *Budget) string {
	s := ""
	for i, p := range b.Status().Pools {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d/%d", p.Name, p.Share, p.Held)
	}
	return s
}

// The pools of one process share one Budget: its member's share is
// divided among them max-min by demand, a pool's idle share moves to the
// busy one after IdleTime, the member's connections never exceed its share
// nor etcd's slot keys the size, and when every pool has left the member
// leaves the budget, to rejoin with the next pool.
func TestPoolsOfAProcessShareOneBudget(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const size = 8
	watchSlots(t, admin, prefix, "db", size)
	other := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond}), 100)
	b := newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond})
	d := &countingDial{}
	newPool := func(name string, minConns int) *shoal.Pool[int] {
		p, err := shoal.New(shoal.Config[int]{Name: name, MaxConns: size, MinConns: minConns, Dial: d.dial, Close: d.close, Budget: b})
		if err != nil {
			t.Fatalf("pool %s: %v", name, err)
		}
		return p
	}
	p1, p2 := newPool("orders", 0), newPool("billing", 1)
	if n := b.Status().Pools; len(n) != 2 {
		t.Fatalf("pools joined: %+v", n)
	}
	stop1, stop2 := holdLeases(p1, 10), holdLeases(p2, 10)
	// Two hungry members: this one's 4 split 2 and 2 between its pools.
	eventually(t, 5*time.Second, "the member's share split evenly between its two hungry pools", func() (bool, string) {
		st := poolsOf(b)
		return st == "orders 2/2, billing 2/2" && other.holding() == 4, st + " " + debugState(b)
	})
	// billing goes idle: after IdleTime its part, but its minimum, goes to orders.
	stop2()
	eventually(t, 5*time.Second, "the idle pool's part moved to the busy one", func() (bool, string) {
		st := poolsOf(b)
		return st == "orders 3/3, billing 1/1", st + " " + debugState(b)
	})
	if m := d.most.Load(); m > 4 {
		t.Fatalf("this member's pools held %d connections at once, above its share of 4", m)
	}
	stop1()
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range []*shoal.Pool[int]{p1, p2} {
		if err := p.Close(closeCtx); err != nil {
			t.Fatal(err)
		}
	}
	// Every pool left: the member left the budget, and the other grows to all of it.
	eventually(t, 5*time.Second, "the other member grown to the whole budget", func() (bool, string) {
		v, err := Read(context.Background(), admin, "db", prefix)
		return err == nil && len(v.Members) == 1 && other.holding() == size, fmt.Sprint(v, err, other.holding())
	})
	// A pool joining later makes the member rejoin.
	p3 := newPool("reports", 0)
	defer p3.Close(context.Background())
	stop3 := holdLeases(p3, 10)
	defer stop3()
	eventually(t, 5*time.Second, "the member rejoined with its new pool", func() (bool, string) {
		v, err := Read(context.Background(), admin, "db", prefix)
		st := poolsOf(b)
		return err == nil && len(v.Members) == 2 && st == "reports 4/4", fmt.Sprint(st, " ", v, err)
	})
}

// A pool that joins twice is refused with ErrJoined, and a closed Budget
// takes no pool; Acquire from outside a pool names the problem when
// several pools are joined.
func TestJoinRefusals(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	prefix := testPrefix(t, newClient(t, addr))
	b := newBudget(t, addr, Options{Name: "db", Size: 4, Prefix: prefix})
	f, g := &fakePool{}, &fakePool{}
	leave, err := b.Join(f)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	if _, err := b.Join(f); !errors.Is(err, ErrJoined) {
		t.Fatalf("the same pool twice: %v, want ErrJoined", err)
	}
	leave2, err := b.Join(g)
	if err != nil {
		t.Fatal(err)
	}
	defer leave2()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := b.Acquire(ctx); err == nil || !strings.Contains(err.Error(), "2 joined") {
		t.Fatalf("Acquire outside a pool with two joined: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Join(&fakePool{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Join after Close: %v, want ErrClosed", err)
	}
}

// A pool of the member held back by its part, while another of its pools
// keeps idle connections holding the member's whole share, asks for a
// division (shoal.BudgetAsker), which the member makes at once rather than
// at its next tick, and the pool gets its connection.
func TestPoolOfAMemberAsksForADivision(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const size = 4
	b := newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond})
	d := &countingDial{}
	newPool := func(name string) *shoal.Pool[int] {
		p, err := shoal.New(shoal.Config[int]{Name: name, MaxConns: size, Dial: d.dial, Close: d.close, Budget: b})
		if err != nil {
			t.Fatalf("pool %s: %v", name, err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		return p
	}
	busy, other := newPool("busy"), newPool("other")
	stop := holdLeases(busy, size)
	eventually(t, 5*time.Second, "the busy pool holding the member's whole share", func() (bool, string) {
		st := poolsOf(b)
		return st == "busy 4/4, other 0/0", st + " " + debugState(b)
	})
	stop()
	eventually(t, 5*time.Second, "the busy pool's demand down to 0, its connections kept", func() (bool, string) {
		ps := b.Status().Pools
		return ps[0].Demand == 0 && ps[0].Held == size && busy.Stats().IdleConns == size, fmt.Sprintf("%+v", ps)
	})
	asked := b.asksServed.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	l, err := other.Acquire(ctx)
	if err != nil {
		t.Fatalf("the other pool's acquire: %v (%s)", err, poolsOf(b))
	}
	waited := time.Since(start)
	l.Release()
	// A regular tick may divide first and serve the pool; the ask, made
	// all the same, is then served askGap after it: wait for it.
	eventually(t, 5*time.Second, "the other pool's ask served by a division", func() (bool, string) {
		return b.asksServed.Load() > asked, fmt.Sprintf("no division asked for: the ask did not reach the member (connection after %s)", waited)
	})
	t.Logf("served after %s", waited)
	if m := d.most.Load(); m > size {
		t.Fatalf("the member's pools held %d connections at once, above its share of %d", m, size)
	}
}
