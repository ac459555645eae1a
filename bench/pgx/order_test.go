package main

import (
	"fmt"
	"testing"
)

func TestRoundOrderTurnsTheOthers(t *testing.T) {
	const n = 4
	place := map[[2]int]int{} // (contender, place) -> rounds
	for r := range n - 1 {
		order := roundOrder(n, r)
		if len(order) != n || order[0] != 0 {
			t.Fatalf("round %d: order %v, want dedicated (0) first and %d in all", r, order, n)
		}
		seen := map[int]bool{}
		for p, c := range order {
			if seen[c] {
				t.Fatalf("round %d: order %v runs %d twice", r, order, c)
			}
			seen[c] = true
			place[[2]int{c, p}]++
		}
	}
	for c := 1; c < n; c++ {
		for p := 1; p < n; p++ {
			if place[[2]int{c, p}] != 1 {
				t.Errorf("contender %d took place %d in %d of %d rounds, want 1", c, p, place[[2]int{c, p}], n-1)
			}
		}
	}
	if got := fmt.Sprint(roundOrder(1, 5)); got != "[0]" {
		t.Errorf("roundOrder(1, 5) = %s, want [0]", got)
	}
}
