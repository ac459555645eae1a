package shoalprom_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestOwnNameNotUTF8 guards metrics made with Pool("") for a pool whose
// Name is not valid UTF-8: they take the name made valid, as a label must
// be, instead of silently reporting nothing.
func TestOwnNameNotUTF8(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	m, err := c.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := shoal.New(shoal.Config[*metricstest.FakeConn]{Name: "caf\xe9", Dial: metricstest.FakeDial(), MaxConns: 2, Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	const want = "caf\uFFFD"
	if got := m.Name(); got != want {
		t.Fatalf("metrics named %q, want %q", got, want)
	}
	families := newScraper(t, reg).scrape()
	got := series(t, families, "db_client_connection_max", dto.MetricType_GAUGE)
	if len(got) != 1 {
		t.Fatalf("db_client_connection_max: %v, want one series for the pool", keys(got))
	}
}
