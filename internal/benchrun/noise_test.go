package benchrun

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// noisy is a result whose slices wander around ips by spread (a
// fraction), drawn from rng.
func noisy(rng *rand.Rand, name string, ips, spread float64) Result {
	r := Result{Name: name, Status: StatusOK, Ops: int64(ips), Window: time.Second,
		Latency: Latency{Mean: time.Millisecond}, SliceIPS: make([]float64, sliceCount)}
	for i := range r.SliceIPS {
		r.SliceIPS[i] = ips * (1 + spread*rng.NormFloat64())
		r.IPS += r.SliceIPS[i] / sliceCount
	}
	return r
}

// TestCompareSeparatesWhatDiffers: a case twice as fast as another is
// judged faster beyond the noise; two cases as fast as each other are
// called within the noise in (nearly) every run.
func TestCompareSeparatesWhatDiffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	beyond := 0
	for range 200 {
		a, b := noisy(rng, "a", 10000, 0.15), noisy(rng, "b", 10000, 0.15)
		if c := Compare(&a, &b, NoiseAlpha); c.Better() || c.Worse() {
			beyond++
		}
		fast, slow := noisy(rng, "fast", 20000, 0.15), noisy(rng, "slow", 10000, 0.15)
		if c := Compare(&fast, &slow, NoiseAlpha); !c.Better() || c.Low > fast.IPS/slow.IPS || c.High < fast.IPS/slow.IPS {
			t.Fatalf("2x faster: %+v", c)
		}
	}
	if beyond > 20 { // 5% expected
		t.Errorf("%d of 200 comparisons of equally fast cases were called beyond the noise", beyond)
	}
}

// TestCompareSaysWhyNotJudged: too few operations, or operations as long
// as the window, leave the noise unjudged, and say so.
func TestCompareSaysWhyNotJudged(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := noisy(rng, "a", 10000, 0.1), noisy(rng, "b", 5000, 0.1)
	b.Ops = 40
	if c := Compare(&a, &b, NoiseAlpha); c.Judged || !strings.Contains(c.Why, "b completed 40 operations") {
		t.Errorf("40 operations: %+v", c)
	}
	b = noisy(rng, "b", 5000, 0.1)
	b.Latency.Mean = 700 * time.Millisecond // a 1s window holds 1.4 of them end to end
	if c := Compare(&a, &b, NoiseAlpha); c.Judged || !strings.Contains(c.Why, "too long for its 1 s window") {
		t.Errorf("700ms operations: %+v", c)
	}
}

// TestCompareUsesRounds: with rounds, the comparison is paired by round:
// a machine that slows every case of a round alike does not hide a
// steady 1.5x.
func TestCompareUsesRounds(t *testing.T) {
	a := Result{Name: "a", IPS: 1500, RoundIPS: []float64{3000, 1500, 600, 2400}}
	b := Result{Name: "b", IPS: 1000, RoundIPS: []float64{2000, 1010, 395, 1600}}
	c := Compare(&a, &b, NoiseAlpha)
	if !c.Rounds || !c.Better() {
		t.Errorf("rounds: %+v", c)
	}
}

func TestJudgeGroupAgainstTheFastest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	j := JudgeGroup([]Result{noisy(rng, "a", 30000, 0.05), noisy(rng, "b", 29500, 0.05), noisy(rng, "c", 1000, 0.05)})
	if j.Level != 1-NoiseAlpha/2 || j.VsFastest[1].Better() || !j.VsFastest[2].Better() {
		t.Errorf("judgement %+v", j)
	}
}
