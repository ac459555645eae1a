package fairshare

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// state is what a division leaves in pools, for comparing two of them.
func state(ps []*Pool) string {
	s := ""
	for _, p := range ps {
		s += fmt.Sprintf("[share %d fullAt %d shortSince %d] ", p.Share, p.fullAt.UnixNano(), p.shortSince.UnixNano())
	}
	return s
}

// twins returns two lists of n like pools: one for a Divider, one for
// DividePools.
func twins(n int) (a, b []*Pool) {
	for range n {
		a = append(a, &Pool{})
		b = append(b, &Pool{})
	}
	return a, b
}

// Each input of a division changed alone, after a division that met every
// demand, changes the shares, and Divider divides again, as DividePools
// does: it skips only a division whose every input is the last one's.
func TestDividerDividesWhenAnInputChanges(t *testing.T) {
	window, every := time.Second, 50*time.Millisecond
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		change func(n *int, ps *[]*Pool, at *time.Time)
	}{
		{"min", func(_ *int, ps *[]*Pool, _ *time.Time) { (*ps)[2].Min = 3 }},
		{"demand", func(_ *int, ps *[]*Pool, _ *time.Time) { (*ps)[2].Demand = 3 }},
		{"now", func(_ *int, ps *[]*Pool, _ *time.Time) { (*ps)[0].Now = 3 }},
		{"held", func(_ *int, ps *[]*Pool, _ *time.Time) { (*ps)[2].Held = 3 }},
		{"share", func(_ *int, ps *[]*Pool, _ *time.Time) { (*ps)[0].Share = 0 }},
		{"size", func(n *int, _ *[]*Pool, _ *time.Time) { *n = 6 }},
		{"a pool left", func(_ *int, ps *[]*Pool, _ *time.Time) { *ps = (*ps)[:2] }},
		{"order", func(_ *int, ps *[]*Pool, _ *time.Time) { *ps = []*Pool{(*ps)[2], (*ps)[0], (*ps)[1]} }},
		{"rotation", func(_ *int, _ *[]*Pool, at *time.Time) { *at = at.Add(window) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d Divider
			memo, plain := twins(3)
			for _, ps := range [][]*Pool{memo, plain} {
				for i, p := range ps {
					p.Demand, p.Now, p.Held = 1-i/2, 1-i/2, 1-i/2 // 1, 1, 0
					p.Need.avg = float64(4 * (1 - i/2))           // read only while a pool waits
				}
			}
			n, at := 5, t0
			d.Divide(n, memo, at, window, every)
			DividePools(n, plain, at, window, every)
			before := state(plain)
			if !d.calm {
				t.Fatalf("the first division (%s) left a pool short of its demand", before)
			}
			at = at.Add(every)
			nm, np, atm, atp := n, n, at, at
			c.change(&nm, &memo, &atm)
			c.change(&np, &plain, &atp)
			d.Divide(nm, memo, atm, window, every)
			DividePools(np, plain, atp, window, every)
			want, got := state(plain), state(memo)
			if want == before {
				t.Fatalf("DividePools gives %s before and after the change: the case tests nothing", want)
			}
			if got != want {
				t.Fatalf("after the change: Divider leaves %s, DividePools %s", got, want)
			}
		})
	}
}

// Over a random walk of samples, most alike, some with pools waiting,
// Divider leaves every pool as DividePools would, and skips divisions.
func TestDividerSameAsDividePools(t *testing.T) {
	window, every := time.Second, 50*time.Millisecond
	rng := rand.New(rand.NewPCG(1, 2))
	var d Divider
	memo, plain := twins(6)
	n, at, skipped := 8, time.Unix(1000, 0), 0
	for step := range 3000 {
		at = at.Add(every)
		i, j, v := rng.IntN(len(plain)), rng.IntN(len(plain)), rng.IntN(5)
		var change func(ps []*Pool) []*Pool
		switch rng.IntN(24) {
		case 0:
			change = func(ps []*Pool) []*Pool { ps[i].Min = min(v, 1); return ps }
		case 1:
			change = func(ps []*Pool) []*Pool { ps[i].Demand = v; return ps }
		case 2:
			change = func(ps []*Pool) []*Pool { ps[i].Now = v; return ps }
		case 3:
			change = func(ps []*Pool) []*Pool { ps[i].Held = v; return ps }
		case 4:
			change = func(ps []*Pool) []*Pool { ps[i].Need.avg = float64(v); return ps }
		case 5:
			change = func(ps []*Pool) []*Pool { ps[i], ps[j] = ps[j], ps[i]; return ps }
		}
		if change != nil {
			memo, plain = change(memo), change(plain)
		}
		if d.same(n, memo, rotation(len(memo), at, max(window, time.Second))) {
			skipped++
		}
		cm := d.Divide(n, memo, at, window, every)
		cp := DividePools(n, plain, at, window, every)
		if got, want := state(memo), state(plain); cm != cp || got != want {
			t.Fatalf("step %d: Divider leaves %s (changed %v), DividePools %s (changed %v)", step, got, cm, want, cp)
		}
	}
	if skipped == 0 {
		t.Fatal("Divider skipped no division: the walk tests nothing")
	}
	t.Logf("%d of 3000 divisions skipped", skipped)
}

// While a pool waits, a division with the same inputs as the last is not
// the same division: the waiting pool's grace runs, and past it the pool
// takes a connection in use. Divider divides every time then.
func TestDividerDividesWhileAPoolWaits(t *testing.T) {
	window, every := 2*time.Second, 50*time.Millisecond
	var d Divider
	memo, plain := twins(2)
	for _, ps := range [][]*Pool{memo, plain} {
		ps[0].Demand, ps[0].Now, ps[0].Held, ps[0].Share = 1, 1, 1, 1 // holds its lease
		ps[1].Demand, ps[1].Now = 1, 1                                // waits for one
	}
	at := time.Unix(1000, 0)
	var got []int
	for range 2 * int(Grace(window, every)/every) {
		d.Divide(1, memo, at, window, every)
		DividePools(1, plain, at, window, every)
		if g, w := state(memo), state(plain); g != w {
			t.Fatalf("at %v of the same inputs: Divider leaves %s, DividePools %s", at, g, w)
		}
		got = append(got, plain[1].Share)
		at = at.Add(every)
	}
	if got[0] != 0 || got[len(got)-1] != 1 {
		t.Fatalf("the waiting pool's share at each division: %v; want 0 first, 1 past the grace", got)
	}
}
