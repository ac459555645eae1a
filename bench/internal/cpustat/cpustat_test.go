package cpustat

import "testing"

func TestParse(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := Parse("cpu  100 5 50 800 20 3 2 10 40 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Ticks{Busy: 100 + 5 + 50 + 3 + 2 + 10, Idle: 820}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if s := IdleShare(Ticks{Busy: 100, Idle: 100}, Ticks{Busy: 175, Idle: 125}); s != 0.25 {
		t.Fatalf("IdleShare = %v, want 0.25", s)
	}
	if s := IdleShare(got, got); s != -1 {
		t.Fatalf("IdleShare of no time = %v, want -1", s)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		}
	}
}
