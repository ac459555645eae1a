package fairshare

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestDivideCases(t *testing.T) {
	type c = Claim
	cases := []struct {
		name   string
		n      int
		claims []Claim
		want   []int
	}{
		{"alone", 10, []c{{"a", 0, 3, 0}}, []int{10}},
		{"nobody", 10, nil, []int{}},
		{"even", 9, []c{{"a", 0, 9, 0}, {"b", 0, 9, 0}, {"c", 0, 9, 0}}, []int{3, 3, 3}},
		{"remainder to lower ids", 10, []c{{"c", 0, 9, 0}, {"a", 0, 9, 0}, {"b", 0, 9, 0}}, []int{3, 4, 3}},
		{"small demand capped, rest to the hungry", 10, []c{{"a", 0, 2, 0}, {"b", 0, 20, 0}}, []int{2, 8}},
		{"minimum honoured while idle", 10, []c{{"a", 3, 0, 0}, {"b", 0, 20, 0}}, []int{3, 7}},
		{"minimum above fair", 10, []c{{"a", 6, 20, 0}, {"b", 0, 20, 0}}, []int{6, 4}},
		{"leftover spread", 10, []c{{"a", 0, 1, 0}, {"b", 0, 1, 0}}, []int{5, 5}},
		{"leftover over minimums", 10, []c{{"a", 4, 0, 0}, {"b", 0, 0, 0}}, []int{5, 5}},
		{"leftover uneven base", 10, []c{{"a", 6, 0, 0}, {"b", 0, 1, 0}}, []int{6, 4}},
		{"minimums too big", 5, []c{{"b", 3, 9, 0}, {"a", 3, 9, 0}}, []int{2, 3}},
		{"minimums exactly fill", 6, []c{{"a", 3, 9, 0}, {"b", 3, 0, 0}}, []int{3, 3}},
		{"leftover keeps what is held", 8, []c{{"a", 2, 1, 8}, {"b", 0, 0, 0}}, []int{8, 0}},
		{"a demand takes from what is held", 8, []c{{"a", 2, 1, 8}, {"b", 0, 1, 0}}, []int{7, 1}},
		{"held beyond the leftover, water-filled", 10, []c{{"a", 0, 4, 0}, {"b", 0, 0, 6}, {"c", 0, 0, 6}}, []int{4, 3, 3}},
		{"leftover beyond what is held spread", 10, []c{{"a", 0, 1, 7}, {"b", 0, 1, 0}}, []int{7, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Divide(tc.n, tc.claims)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("Divide(%d, %v) = %v, want %v", tc.n, tc.claims, got, tc.want)
			}
		})
	}
}

// Random claims: the shares sum to n, honour every minimum that fits, are
// max-min fair (a member below its demand has at least what any other
// member has above that other's minimum, less one: the remainder), and,
// where n covers every demand and every connection held, keep each
// member's connections.
func TestDivideProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 5000 {
		n := 1 + r.IntN(60)
		k := 1 + r.IntN(8)
		claims := make([]Claim, k)
		sumMin := 0
		for i := range claims {
			m := 0
			if r.IntN(3) == 0 {
				m = r.IntN(n/k + 1)
			}
			sumMin += m
			claims[i] = Claim{ID: fmt.Sprintf("m%02d", r.IntN(100)*10+i), Min: m, Demand: r.IntN(2 * n)}
			if r.IntN(2) == 0 {
				claims[i].Held = r.IntN(n + 1)
			}
		}
		got := Divide(n, claims)
		if s := Sum(got); s != n {
			t.Fatalf("iter %d: %v sum to %d, want %d (claims %v)", iter, got, s, n, claims)
		}
		if sumMin > n {
			continue
		}
		covered := 0
		for _, c := range claims {
			covered += max(c.Min, c.Demand, c.Held)
		}
		for i, c := range claims {
			if covered <= n && got[i] < c.Held {
				t.Fatalf("iter %d: %s holds %d but got %d, with n (%d) covering every demand and hold: %v %v", iter, c.ID, c.Held, got[i], n, claims, got)
			}
			if got[i] < c.Min {
				t.Fatalf("iter %d: %s got %d below its minimum %d (claims %v, shares %v)", iter, c.ID, got[i], c.Min, claims, got)
			}
			if got[i] >= c.Demand {
				continue
			}
			for j, o := range claims {
				if got[j] > max(o.Min, got[i]+1) {
					t.Fatalf("iter %d: %s is short (%d of %d) while %s has %d (min %d): %v %v", iter, c.ID, got[i], c.Demand, o.ID, got[j], o.Min, claims, got)
				}
			}
		}
		// Deterministic whatever the order of the list.
		rev := make([]Claim, k)
		for i := range claims {
			rev[k-1-i] = claims[i]
		}
		got2 := Divide(n, rev)
		for i := range claims {
			if got2[k-1-i] != got[i] {
				t.Fatalf("iter %d: order changes the shares: %v vs %v", iter, got, got2)
			}
		}
	}
}
