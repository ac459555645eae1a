package shoalotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestExtras(t *testing.T) {
	metrics, reader := newMetrics(t)
	p, err := metrics.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	stats := metricstest.RunExtras(t, p)
	if stats.DialErrors != 1 || stats.Dials != 3 || stats.RejectedAcquires != 1 || stats.Closed != 2 {
		t.Fatalf("Stats disagree with the scenario: %+v", stats)
	}
	const pool = "db.client.connection.pool.name=p"
	c := collect(t, reader)
	for _, ct := range []struct {
		name, unit string
		want       int64
	}{
		{"shoal.pool.dial_errors", "{error}", 1},
		{"shoal.pool.rejections", "{request}", 1},
		{"db.client.connection.timeouts", "{timeout}", 0},
		{"shoal.pool.leaks", "{lease}", 0},
	} {
		if got := c.sum(t, ct.name, ct.unit, true); fmt.Sprint(got) != fmt.Sprint(map[string]int64{pool: ct.want}) {
			t.Errorf("%s = %v, want %d", ct.name, got, ct.want)
		}
	}
	closes := c.sum(t, "shoal.pool.closes", "{connection}", true)
	var total int64
	for k, v := range closes {
		total += v
		want := int64(0)
		if k == pool+",shoal.close.reason=discarded" || k == pool+",shoal.close.reason=pool_closed" {
			want = 1
		}
		if v != want {
			t.Errorf("shoal.pool.closes{%s} = %d, want %d", k, v, want)
		}
	}
	if total != stats.Closed {
		t.Errorf("closes summed over reasons = %d, want Stats.Closed = %d", total, stats.Closed)
	}
	for name, want := range map[string]uint64{
		"db.client.connection.create_time": 2,
		"db.client.connection.wait_time":   2,
		"db.client.connection.use_time":    2,
	} {
		if got := c.histogram(t, name)[pool].Count; got != want {
			t.Errorf("%s count = %d, want %d", name, got, want)
		}
	}
}

// TestMultiplexed: with several leases per connection, used counts
// connections and shoal.pool.leases counts leases.
func TestMultiplexed(t *testing.T) {
	metrics, reader := newMetrics(t)
	p, err := metrics.Pool("h2")
	if err != nil {
		t.Fatal(err)
	}
	metricstest.HoldStreams(t, p, 3)
	const name = "db.client.connection.pool.name=h2"
	c := collect(t, reader)
	if got, want := c.sum(t, "db.client.connection.count", "{connection}", false), map[string]int64{
		name + ",db.client.connection.state=idle": 0,
		name + ",db.client.connection.state=used": 1,
	}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("db.client.connection.count = %v, want %v", got, want)
	}
	if got := c.sum(t, "shoal.pool.leases", "{lease}", false)[name]; got != 3 {
		t.Errorf("shoal.pool.leases = %d, want 3", got)
	}
}

// bargeMisses collects shoal.pool.barge_misses, by attributes, failing
// when it is missing, not a monotonic cumulative int64 sum, or in another
// unit.
func bargeMisses(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	c := collect(t, reader)
	got := c.sum(t, "shoal.pool.barge_misses", "{connection}", true)
	if d := c["shoal.pool.barge_misses"].Description; !strings.Contains(d, "Config.BargeWindow") {
		t.Errorf("shoal.pool.barge_misses description %q does not say it needs Config.BargeWindow", d)
	}
	return got
}

// TestBargeMisses: shoal.pool.barge_misses is Stats.BargeMisses, read at
// collection: 1 for a barging pool whose released connection went
// unclaimed while someone waited, 0 for a strict pool taken through the
// same events and for a pool not attached; a closed pool's count stays.
func TestBargeMisses(t *testing.T) {
	metrics, reader := newMetrics(t)
	pool := func(name string) *shoalotel.PoolMetrics {
		p, err := metrics.Pool(name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	barging := metricstest.HandOffOnce(t, pool("barging"), time.Hour)
	strict := metricstest.HandOffOnce(t, pool("strict"), 0)
	pool("unattached")
	const name = "db.client.connection.pool.name="
	want := map[string]int64{name + "barging": 1, name + "strict": 0, name + "unattached": 0}
	if got := bargeMisses(t, reader); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("open pools: shoal.pool.barge_misses = %v, want %v", got, want)
	}
	for _, p := range []*shoal.Pool[*fakeConn]{barging, strict} {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := bargeMisses(t, reader); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("closed pools: shoal.pool.barge_misses = %v, want %v", got, want)
	}
}

// TestBargeMissesContinueWhenANameIsRegisteredAgain: a counter must not
// fall, so a name registered again after Unregister continues from what
// the earlier registration counted.
func TestBargeMissesContinueWhenANameIsRegisteredAgain(t *testing.T) {
	metrics, reader := newMetrics(t)
	first, err := metrics.Pool("reused")
	if err != nil {
		t.Fatal(err)
	}
	p := metricstest.HandOffOnce(t, first, time.Hour)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	const key = "db.client.connection.pool.name=reused"
	if got := bargeMisses(t, reader)[key]; got != 1 {
		t.Fatalf("before Unregister: shoal.pool.barge_misses = %d, want 1", got)
	}
	first.Unregister()
	if _, err := metrics.Pool("reused"); err != nil {
		t.Fatal(err)
	}
	if got := bargeMisses(t, reader)[key]; got != 1 {
		t.Errorf("registered again: shoal.pool.barge_misses = %d, want 1 (a counter does not fall)", got)
	}
}
