package benchrun

import (
	"testing"
	"time"
)

func TestWaitBucketsCoverEveryValueInOrder(t *testing.T) {
	prev := -1
	for _, ns := range []int64{0, 1, 7, 8, 9, 15, 16, 100, 1000, 1 << 20, 1<<40 + 12345, 1<<62 + 1} {
		b := waitBucket(ns)
		if b < prev {
			t.Fatalf("bucket of %d is %d, below the previous %d", ns, b, prev)
		}
		if up := waitBucketUpper(b); up < ns {
			t.Fatalf("bucket %d of %d ends at %d, below the value", b, ns, up)
		}
		if b > 0 && waitBucketUpper(b-1) >= ns {
			t.Fatalf("%d belongs in an earlier bucket than %d", ns, b)
		}
		prev = b
	}
}

func TestWaitObserverPercentiles(t *testing.T) {
	var o WaitObserver
	o.ObserveAcquire(time.Second) // before start: not recorded
	o.start()
	for i := 0; i < 990; i++ {
		o.ObserveAcquire(100 * time.Nanosecond)
	}
	for i := 0; i < 10; i++ {
		o.ObserveAcquire(time.Millisecond)
	}
	w := o.stop()
	o.ObserveAcquire(time.Hour) // after stop: not recorded
	if w == nil {
		t.Fatal("no summary")
	}
	within := func(got, want time.Duration) bool { return got >= want && got <= want+want/8 }
	if !within(w.P50, 100) || !within(w.P99, 100) || !within(w.P999, time.Millisecond) || w.Max != time.Millisecond {
		t.Fatalf("summary %+v", w)
	}
	if (&WaitObserver{}).stop() != nil {
		t.Fatal("empty observer summarised")
	}
}
