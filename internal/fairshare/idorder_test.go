package fairshare

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// idOrder finds a rotation of the ID order without sorting, and gives the
// sort's order otherwise, ties included.
func TestIDOrderIsTheSortsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 3000 {
		n := r.IntN(12)
		claims := make([]Claim, n)
		switch iter % 3 {
		case 0: // a rotation of distinct IDs, as DividePools gives
			rot := r.IntN(n + 1)
			for i := range claims {
				claims[i].ID = fmt.Sprintf("%03d", (i-rot+n)%max(n, 1))
			}
		case 1: // random, ties likely
			for i := range claims {
				claims[i].ID = fmt.Sprint(r.IntN(4))
			}
		default: // random, distinct
			for i, v := range r.Perm(n) {
				claims[i].ID = fmt.Sprintf("%03d", v)
			}
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		sort.Slice(want, func(a, b int) bool { return claims[want[a]].ID < claims[want[b]].ID })
		if got := idOrder(claims); !slices.Equal(got, want) {
			t.Fatalf("iter %d: idOrder(%v) = %v, want the sort's %v", iter, claims, got, want)
		}
	}
}
