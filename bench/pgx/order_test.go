package main

import (
	"fmt"
	"testing"
)

// Every round runs dedicated first and every other contender once; a
// round and its mirror run every pair of the others in both orders, so
// their places add up to the same for all; and the even rounds turn, so
// that over them each contender takes every place once.
func TestRoundOrderMirrorsAndTurns(t *testing.T) {
	for _, n := range []int{2, 3, 4, 9} {
		m := n - 1
		place := map[[2]int]int{} // (contender, place) -> even rounds
		for r := range 2 * m {
			order := roundOrder(n, r)
			if len(order) != n || order[0] != 0 {
				t.Fatalf("n=%d round %d: order %v, want dedicated (0) first and %d in all", n, r, order, n)
			}
			seen := map[int]bool{}
			for _, c := range order {
				if seen[c] || c < 0 || c >= n {
					t.Fatalf("n=%d round %d: order %v does not run each contender once", n, r, order)
				}
				seen[c] = true
			}
			if r%2 == 0 {
				for p, c := range order {
					place[[2]int{c, p}]++
				}
				continue
			}
			prev := roundOrder(n, r-1)
			at := func(o []int, c int) int {
				for p, x := range o {
					if x == c {
						return p
					}
				}
				return -1
			}
			for a := 1; a < n; a++ {
				if sum := at(prev, a) + at(order, a); sum != n {
					t.Errorf("n=%d rounds %d and %d: contender %d at places summing to %d, want %d", n, r-1, r, a, sum, n)
				}
				for b := a + 1; b < n; b++ {
					if (at(prev, a) < at(prev, b)) == (at(order, a) < at(order, b)) {
						t.Errorf("n=%d rounds %d and %d: %d and %d in the same order in both", n, r-1, r, a, b)
					}
				}
			}
		}
		for c := 1; c < n; c++ {
			for p := 1; p < n; p++ {
				if place[[2]int{c, p}] != 1 {
					t.Errorf("n=%d: contender %d took place %d in %d of the %d even rounds, want 1", n, c, p, place[[2]int{c, p}], m)
				}
			}
		}
	}
	if got := fmt.Sprint(roundOrder(1, 5)); got != "[0]" {
		t.Errorf("roundOrder(1, 5) = %s, want [0]", got)
	}
}
