package shoalotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
)

// TestBargeMissesContinueWhenANameIsRegisteredAgain: a counter must not
// fall, so a name registered again after Unregister continues from what
// the earlier registration counted.
func TestBargeMissesContinueWhenANameIsRegisteredAgain(t *testing.T) {
	metrics, reader := newMetrics(t)
	set := &otelSet{m: metrics, reader: reader}
	first, err := metrics.Pool("reused")
	if err != nil {
		t.Fatal(err)
	}
	p := metricstest.HandOffOnce(t, first, time.Hour)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	key := metricstest.Key(metricstest.BargeMisses, "pool=reused")
	if got := set.Read(t)[key]; got != 1 {
		t.Fatalf("before Unregister: shoal.pool.barge_misses = %v, want 1", got)
	}
	first.Unregister()
	if _, err := metrics.Pool("reused"); err != nil {
		t.Fatal(err)
	}
	if got := set.Read(t)[key]; got != 1 {
		t.Errorf("registered again: shoal.pool.barge_misses = %v, want 1 (a counter does not fall)", got)
	}
}
