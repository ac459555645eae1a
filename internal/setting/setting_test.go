package setting

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	for _, c := range []struct{ v, def, want time.Duration }{
		{0, time.Second, time.Second},
		{-1, time.Second, 0},
		{-time.Hour, time.Second, 0},
		{3 * time.Second, time.Second, 3 * time.Second},
	} {
		if got := Or(c.v, c.def); got != c.want {
			t.Errorf("Or(%v, %v) = %v, want %v", c.v, c.def, got, c.want)
		}
	}
	if got := Or(0, 4); got != 4 {
		t.Errorf("Or(0, 4) = %d, want 4", got)
	}
}
