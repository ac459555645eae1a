package shoalhttp

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// fakeConn stands for an origin's connection in the core pools below,
// which never touch the network.
type fakeConn struct{}

func newFakePool(t *testing.T, name string, b shoal.Budget) *shoal.Pool[*fakeConn] {
	t.Helper()
	p, err := shoal.New(shoal.Config[*fakeConn]{
		Name:     name,
		MaxConns: 2,
		Budget:   b,
		Dial:     func(context.Context) (*fakeConn, error) { return &fakeConn{}, nil },
		Close:    func(*fakeConn) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// An origin's pool held back by its share under MaxConnsTotal, while
// another origin keeps idle connections holding the whole cap, gets its
// connection within milliseconds: its ask for a division passes through
// the origin's budget to the Transport's, rather than waiting for the
// budget's next regular sample (50ms).
func TestMaxConnsTotalOriginAsksForADivision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := shoal.NewBudget(2, shoal.BudgetIdleTime(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		busy := newFakePool(t, "busy", b)
		var held []shoal.Lease[*fakeConn]
		for range 2 {
			l, err := busy.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Release()
		}
		time.Sleep(2 * time.Second) // past IdleTime: the busy origin's demand is 0
		synctest.Wait()
		if s := busy.Stats(); s.IdleConns != 2 {
			t.Fatalf("busy origin: %+v, want its 2 connections kept idle while nobody asks", s)
		}
		other := newFakePool(t, "other", &originBudget{first: &firstConns{budget: b}, name: "other"})
		start := time.Now()
		l, err := other.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		waited := time.Since(start)
		l.Release()
		// Well under the 50ms sample; an ask is served within 5ms.
		if waited > 10*time.Millisecond {
			t.Fatalf("waited %s for a connection the busy origin kept idle, want an ask served within milliseconds", waited)
		}
	})
}
