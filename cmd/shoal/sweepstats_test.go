package main

import (
	"math/rand/v2"
	"testing"
)

// synthetic draws rounds of throughput around mean with the spread a
// loaded machine gives (10% from round to round, shared by every
// configuration of a round, plus 5% of its own).
func synthetic(rng *rand.Rand, shared []float64, mean float64) []float64 {
	out := make([]float64, len(shared))
	for r := range shared {
		out[r] = mean * shared[r] * (1 + 0.05*rng.NormFloat64())
	}
	return out
}

// sweepOf builds a sweep of n configurations over rounds rounds; means[i]
// is configuration i's true throughput.
func sweepOf(seed uint64, rounds int, means []float64) []configRounds {
	rng := rand.New(rand.NewPCG(seed, 1))
	shared := make([]float64, rounds)
	for r := range shared {
		shared[r] = 1 + 0.10*rng.NormFloat64()
	}
	out := make([]configRounds, len(means))
	for i, m := range means {
		out[i] = configRounds{name: string(rune('a' + i)), ips: synthetic(rng, shared, m)}
	}
	return out
}

// byIndex: a lower index is a smaller configuration.
func byIndex(i, j int) bool { return i < j }

// TestDecideEqualKeepsDefault: thirteen configurations with the same true
// throughput, as the five contradictory runs suggest, must give
// "keep the default" in (almost) every sweep; the old rule, the best
// measured within 3%, named a winner every time.
func TestDecideEqualKeepsDefault(t *testing.T) {
	means := make([]float64, 13)
	for i := range means {
		means[i] = 25000
	}
	picked := 0
	for seed := range uint64(200) {
		if v := decide(sweepOf(seed, 5, means), 0, byIndex); v.Pick >= 0 {
			picked++
		}
	}
	// sweepAlpha bounds the rate at 5%; Bonferroni is conservative.
	if picked > 10 {
		t.Errorf("%d of 200 sweeps of equal configurations recommended one; want about 5%% at most", picked)
	}
}

// TestDecideClearlyBetter: one configuration 40% faster is recommended,
// with a ratio whose interval excludes 1; a smaller one that is as fast
// as it is recommended instead of it.
func TestDecideClearlyBetter(t *testing.T) {
	means := []float64{25000, 25000, 35000, 25000, 25000}
	for seed := range uint64(50) {
		v := decide(sweepOf(seed, 5, means), 0, byIndex)
		if v.Pick != 2 || v.Best != 2 || v.VsDefault[2].Low <= 1 {
			t.Fatalf("seed %d: picked %d (best %d), vs default %+v; want 2", seed, v.Pick, v.Best, v.VsDefault[2])
		}
	}
	means = []float64{25000, 35000, 25000, 35000, 25000}
	for seed := range uint64(50) {
		if v := decide(sweepOf(seed, 5, means), 0, byIndex); v.Pick != 1 {
			t.Fatalf("seed %d: picked %d of two equally fast, want the smaller, 1", seed, v.Pick)
		}
	}
}

// TestDecideDefaultIsBest: when the others are slower, keep the default.
func TestDecideDefaultIsBest(t *testing.T) {
	v := decide(sweepOf(1, 5, []float64{30000, 20000, 21000}), 0, byIndex)
	if v.Pick != -1 || !v.VsDefault[1].Worse() {
		t.Errorf("picked %d, vs default %+v", v.Pick, v.VsDefault)
	}
}
