package fairshare

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestRebalanceCases(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ago := func(s int) time.Time { return t0.Add(-time.Duration(s) * time.Second) }
	type h = Holder
	cases := []struct {
		name string
		n    int
		hs   []Holder
		fair []int
		want []int
	}{
		{"nobody short: shares stay, even away from fair", 4,
			[]h{{ID: "a", Share: 3, Now: 1, Need: 1}, {ID: "b", Share: 1, Now: 1, Need: 3}}, []int{1, 3}, []int{3, 1}},
		{"idle connections move at once, from the one full longest ago", 6,
			[]h{{ID: "a", Share: 2, Now: 0, FullAt: ago(1)}, {ID: "b", Share: 2, Now: 0, FullAt: ago(5)}, {ID: "c", Share: 2, Now: 4, Need: 4}},
			[]int{1, 1, 4}, []int{2, 0, 4}},
		{"idle kept within the owner's need", 4,
			[]h{{ID: "a", Share: 3, Now: 0, Need: 3}, {ID: "b", Share: 1, Now: 2, Need: 1}}, []int{2, 2}, []int{2, 2}},
		{"busy connections stay before the grace", 4,
			[]h{{ID: "a", Share: 4, Now: 4, Need: 4}, {ID: "b", Share: 0, Now: 2, ShortSince: ago(0)}}, []int{2, 2}, []int{4, 0}},
		{"busy connections move after it, down to fair", 4,
			[]h{{ID: "a", Share: 4, Now: 4, Need: 4}, {ID: "b", Share: 0, Now: 3, ShortSince: ago(1), Overdue: true}}, []int{2, 2}, []int{2, 2}},
		{"one connection for whoever waits, whatever its fair share", 2,
			[]h{{ID: "a", Share: 1, Now: 2, Need: 2}, {ID: "b", Share: 1, Now: 2, Need: 2}, {ID: "c", Share: 0, Now: 1, ShortSince: ago(1), Overdue: true}},
			[]int{1, 1, 0}, []int{0, 1, 1}},
		{"minimums never taken", 3,
			[]h{{ID: "a", Min: 2, Share: 2, Now: 2}, {ID: "b", Min: 1, Share: 1, Now: 1}, {ID: "c", Share: 0, Now: 1, ShortSince: ago(1), Overdue: true}},
			[]int{2, 1, 0}, []int{2, 1, 0}},
		{"a member below its minimum gets it at once, from a connection in use", 2,
			[]h{{ID: "a", Min: 1, Share: 2, Now: 2, Need: 2}, {ID: "b", Min: 1, Share: 0, Now: 1, ShortSince: t0}}, []int{1, 1}, []int{1, 1}},
		{"a minimum taken from above the others' minimums, fair or not", 3,
			[]h{{ID: "a", Min: 1, Share: 3, Now: 3, Need: 3}, {ID: "b", Min: 2, Share: 0, Now: 0}}, []int{3, 2}, []int{1, 2}},
		{"free shares to the short, longest short first", 3,
			[]h{{ID: "a", Share: 1, Now: 3, ShortSince: ago(1)}, {ID: "b", Share: 0, Now: 3, ShortSince: ago(2)}}, []int{2, 2}, []int{1, 2}},
		{"free shares left go to who is below fair", 4,
			[]h{{ID: "a", Share: 1, Now: 0}, {ID: "b", Share: 0, Now: 0}}, []int{2, 2}, []int{2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Rebalance(tc.n, tc.hs, tc.fair); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Rebalance(%d, %+v, %v) = %v, want %v", tc.n, tc.hs, tc.fair, got, tc.want)
			}
		})
	}
}

// Random states: the shares never sum above n, never fall below a minimum
// (a member's own below it included, when the minimums fit), never take a
// connection in use from anyone for a member not overdue or below its
// minimum, and leave no member that waits with nothing while a connection
// is idle.
func TestRebalanceProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	t0 := time.Unix(1000, 0)
	for iter := range 5000 {
		n := 1 + r.IntN(30)
		k := 1 + r.IntN(8)
		hs := make([]Holder, k)
		claims := make([]Claim, k)
		left := n
		if r.IntN(4) == 0 {
			left = n + r.IntN(n+1) // n has shrunk below the shares out
		}
		for i := range hs {
			s := r.IntN(left + 1)
			left -= s
			m := 0
			switch r.IntN(8) {
			case 0, 1:
				m = r.IntN(s + 1)
			case 2:
				// Above its share: a member that has just joined, or whose
				// minimum grew back.
				m = s + r.IntN(max(n-s, 0)+1)
			}
			hs[i] = Holder{ID: fmt.Sprintf("m%02d", i), Min: m, Share: s, Now: r.IntN(n + 1), Need: r.IntN(n + 1),
				FullAt: t0.Add(-time.Duration(r.IntN(10)) * time.Second)}
			if r.IntN(4) == 0 {
				hs[i].Held = r.IntN(n + 1)
			}
			if r.IntN(2) == 0 {
				hs[i].ShortSince = t0.Add(-time.Duration(r.IntN(3)) * time.Second)
				hs[i].Overdue = r.IntN(2) == 0
			}
			claims[i] = Claim{ID: hs[i].ID, Min: m, Demand: hs[i].Need}
		}
		fair := Divide(n, claims)
		if r.IntN(2) == 0 {
			// As DividePools: the larger of the divisions by need and by
			// demand, which may sum above n.
			for i, d := range Divide(n, shuffledDemands(r, claims)) {
				fair[i] = max(fair[i], d)
			}
		}
		got := Rebalance(n, hs, fair)
		if s := Sum(got); s > n {
			t.Fatalf("iter %d: %v sum to %d > %d (%+v)", iter, got, s, n, hs)
		}
		// A member below its minimum takes connections in use at once,
		// as one overdue does.
		overdue := false
		for _, h := range hs {
			overdue = overdue || h.Overdue || h.Share < h.Min
		}
		sumMin := 0
		for _, h := range hs {
			sumMin += h.Min
		}
		for i, h := range hs {
			if got[i] < h.Min && sumMin <= n {
				t.Fatalf("iter %d: %s below its minimum: %v (%+v)", iter, h.ID, got, hs)
			}
			if !overdue && got[i] < min(h.Share, h.Now) && Sum(shareOf(hs)) <= n {
				t.Fatalf("iter %d: %s lost a connection in use with nobody overdue: %v (%+v, fair %v)", iter, h.ID, got, hs, fair)
			}
		}
		for i, h := range hs {
			if got[i] > 0 || h.Now <= h.Held {
				continue // served, or holding all it asks for
			}
			for j, o := range hs {
				if got[j] > max(min(fair[j], o.Need), o.Now, o.Min) {
					t.Fatalf("iter %d: %s waits with nothing while %s keeps an idle connection: %v (%+v, fair %v)", iter, h.ID, o.ID, got, hs, fair)
				}
			}
		}
	}
}

// shuffledDemands returns claims with other demands, as a division by
// another measure sees them.
func shuffledDemands(r *rand.Rand, claims []Claim) []Claim {
	out := make([]Claim, len(claims))
	for i, c := range claims {
		out[i] = Claim{ID: c.ID, Min: c.Min, Demand: r.IntN(2*c.Demand + 2)}
	}
	return out
}

func shareOf(hs []Holder) []int {
	out := make([]int, len(hs))
	for i, h := range hs {
		out[i] = h.Share
	}
	return out
}
