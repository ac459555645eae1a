package main

import "testing"

func TestPairedRatios(t *testing.T) {
	// Three contenders, the last being shoalhttp; three rounds. Round 2 is
	// slow for everyone: pairing keeps it from skewing the ratio.
	perRound := [][]float64{
		{100, 200, 300},
		{10, 20, 40},
		{100, 250, 250},
	}
	got := pairedRatios(perRound)
	want := []float64{3, 1.5} // medians of {3, 4, 2.5} and {1.5, 2, 1}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ratio %d = %v, want %v", i, got[i], want[i])
		}
	}
	if r := pairedRatios(nil); r != nil {
		t.Errorf("no rounds: %v, want nil", r)
	}
}
