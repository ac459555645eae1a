package shoal

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A pool that waits takes a peer's connections in use only once it has
// waited an eighth of IdleTime: 125ms for an IdleTime of 1s, written out
// here rather than computed from the code's own grace, so that the test
// holds the documented figure.
func TestLocalBudgetBusyConnectionsMoveAfterAnEighthOfIdleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 2, BudgetIdleTime(time.Second))
		ha := hold(a, 2)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		hc := hold(c, 1)
		time.Sleep(115 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 2/2, c 0/0" {
			t.Fatalf("within 125ms: %s", got)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/2, c 1/0" {
			t.Fatalf("past 125ms: %s, want a 1/2, c 1/0", got)
		}
		ha.stop()
		hc.stop()
	})
}

// The grace is at least 50ms, even with no IdleTime: a division between
// samples (a pool joining) 10ms after a sample found c short moves
// nothing. The floor shows only there, since samples come every 50ms.
func TestLocalBudgetGraceIsAtLeast50ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 2, BudgetIdleTime(-1))
		ha := hold(a, 2)
		time.Sleep(time.Second)
		synctest.Wait()
		hc := hold(c, 1)
		time.Sleep(50 * time.Millisecond) // the sample that finds c short
		synctest.Wait()
		before := sharesOf(b)
		time.Sleep(10 * time.Millisecond)
		leave, err := b.Join(&countMember{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := sharesOf(b); got != before+", pool-3 0/0" {
			t.Fatalf("a division 10ms after c was found short: %s, before %s", got, before)
		}
		leave()
		ha.stop()
		hc.stop()
	})
}

// What is left over after an even split goes round the pools every
// IdleTime, but not more often than once a second: with an IdleTime of
// 100ms the shares are the same 900ms later.
func TestLocalBudgetRemainderGoesRoundAtMostEverySecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _, _ := peersUnderBudget(t, 3, BudgetIdleTime(100*time.Millisecond))
		first := sharesOf(b)
		time.Sleep(900 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != first {
			t.Fatalf("shares %s at first, %s 900ms later: the remainder moved within a second", first, got)
		}
	})
}

// demandCounter is a budget member that counts the divisions that read it.
type demandCounter struct {
	countMember
	calls atomic.Int32
}

// Demand counts the call.
func (m *demandCounter) Demand() int { m.calls.Add(1); return m.countMember.Demand() }

// Asks divide at most every 5ms: 50 asks 1ms apart, while a peer keeps
// idle connections (so that asks count), make at most 10 divisions, and
// one regular sample more.
func TestLocalBudgetAsksDivideAtMostEvery5ms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _, a := memberBesidePool(t)
		m := &demandCounter{}
		leave, err := b.Join(m)
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
		ha := hold(a, 3)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		ha.stop()
		time.Sleep(2 * time.Second) // a holds 3 idle: asks count
		synctest.Wait()
		start := m.calls.Load()
		for range 50 {
			b.AskShare()
			time.Sleep(time.Millisecond)
		}
		if n := m.calls.Load() - start; n > 12 {
			t.Fatalf("%d divisions in 50ms of asks, want at most 10 asked + 1 regular", n)
		}
	})
}
