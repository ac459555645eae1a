package main

import (
	"math"
	"slices"
	"testing"
)

// Odd rounds run the contenders as given and even rounds reversed, and
// no round changes the caller's slice.
func TestRoundOrder(t *testing.T) {
	given := []string{"static", "etcd", "pgbouncer"}
	reversed := []string{"pgbouncer", "etcd", "static"}
	for r := 1; r <= 5; r++ {
		want := given
		if r%2 == 0 {
			want = reversed
		}
		if got := roundOrder(given, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}
	if !slices.Equal(given, []string{"static", "etcd", "pgbouncer"}) {
		t.Errorf("the given order changed to %v", given)
	}
	// Over two rounds, each of any two contenders runs before the other once.
	two := []string{"a", "b", "c", "d"}
	for i, x := range two {
		for _, y := range two[i+1:] {
			first := 0
			for r := 1; r <= 2; r++ {
				o := roundOrder(two, r)
				if slices.Index(o, x) < slices.Index(o, y) {
					first++
				}
			}
			if first != 1 {
				t.Errorf("%s ran before %s in %d of 2 rounds, want 1", x, y, first)
			}
		}
	}
}

// Cells split into their rounds, first round first, each round's cells in
// the order they ran.
func TestByRound(t *testing.T) {
	cells := []cell{
		{round: 1, contender: "a"}, {round: 1, contender: "b"},
		{round: 2, contender: "b"}, {round: 2, contender: "a"},
		{round: 3, contender: "a"},
	}
	got := byRound(cells)
	if len(got) != 3 {
		t.Fatalf("%d rounds, want 3", len(got))
	}
	for i, want := range [][]string{{"a", "b"}, {"b", "a"}, {"a"}} {
		var names []string
		for _, c := range got[i] {
			names = append(names, c.contender)
			if c.round != i+1 {
				t.Errorf("round %d holds a cell of round %d", i+1, c.round)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("round %d: %v, want %v", i+1, names, want)
		}
	}
}

// The median is the middle value, or the mean of the middle two; the
// spread its least and most; rounds without the figure (NaN) left out.
func TestSpreadOf(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		xs             []float64
		n              int
		median, lo, hi float64
	}{
		{[]float64{1.1}, 1, 1.1, 1.1, 1.1},
		{[]float64{1.2, 0.9, 1.0}, 3, 1.0, 0.9, 1.2},
		{[]float64{1.4, 0.8, 1.0, 1.2}, 4, 1.1, 0.8, 1.4},
		{[]float64{0.9, nan, 1.3}, 2, 1.1, 0.9, 1.3},
		{[]float64{3, 1, 2, 5, 4}, 5, 3, 1, 5},
	} {
		s := spreadOf(tc.xs)
		if s.n != tc.n || math.Abs(s.median-tc.median) > 1e-9 || s.lo != tc.lo || s.hi != tc.hi {
			t.Errorf("spreadOf(%v) = %+v, want n %d, median %g, %g to %g", tc.xs, s, tc.n, tc.median, tc.lo, tc.hi)
		}
	}
	if s := spreadOf([]float64{nan}); s.n != 0 || !math.IsNaN(s.median) {
		t.Errorf("spreadOf of no measurement = %+v, want n 0 and a NaN median", s)
	}
}
