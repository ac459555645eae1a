package median

import (
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	if got := Of([]float64{3, 1, 2}); got != 2 {
		t.Errorf("odd count: %v, want 2", got)
	}
	if got := Of([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("even count: %v, want the mean of the middle two, 2.5", got)
	}
	if got := Of([]time.Duration{40, 10, 30, 20}); got != 25 {
		t.Errorf("durations: %v, want 25", got)
	}
	if got := Of([]int{}); got != 0 {
		t.Errorf("none: %v, want 0", got)
	}
	xs := []int{2, 1}
	Of(xs)
	if xs[0] != 2 {
		t.Errorf("Of sorted its argument: %v", xs)
	}
}
