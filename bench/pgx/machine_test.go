package main

import "testing"

func TestParseCPUTicks(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice
	got, err := parseCPUTicks("cpu  100 5 50 800 20 3 2 10 40 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := (cpuTicks{busy: 100 + 5 + 50 + 3 + 2 + 10, idle: 820}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if s := idleShare(cpuTicks{busy: 100, idle: 100}, cpuTicks{busy: 175, idle: 125}); s != 0.25 {
		t.Fatalf("idleShare = %v, want 0.25", s)
	}
	if s := idleShare(got, got); s != -1 {
		t.Fatalf("idleShare of no time = %v, want -1", s)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5"} {
		if _, err := parseCPUTicks(bad); err == nil {
			t.Errorf("parseCPUTicks(%q) accepted it", bad)
		}
	}
}
