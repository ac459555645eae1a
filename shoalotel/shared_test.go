package shoalotel_test

import (
	"net"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestShared runs the tests shoalprom runs too.
func TestShared(t *testing.T) { metricstest.Run(t, backend) }

// backend makes Metrics on an SDK MeterProvider read by a manual reader.
var backend = metricstest.Backend{
	New: func(t testing.TB) metricstest.Set {
		m, reader := newMetrics(t)
		return &otelSet{m: m, reader: reader}
	},
	ErrDuplicatePool: shoalotel.ErrDuplicatePool,
}

// otelSet is Metrics on an SDK MeterProvider read by a manual reader.
type otelSet struct {
	m      *shoalotel.Metrics
	reader *sdkmetric.ManualReader
}

func (s *otelSet) Pool(name string) (metricstest.Metrics, error) {
	return metricstest.Registered(s.m.Pool(name))
}

// The kinds of instrument.
const (
	upDown    = iota // an int64 sum, not monotonic: observable up-down counters
	counter          // an int64 sum, monotonic
	histogram        // a float64 histogram
	gauge            // a float64 gauge
)

// otelInstrument is what the package doc says of one instrument: its kind
// and unit, and a phrase its description must hold.
type otelInstrument struct {
	kind        int
	unit        string
	description string
}

// otelInstruments are the instruments Metrics creates; their names are
// the neutral ones.
var otelInstruments = map[string]otelInstrument{
	metricstest.Count:         {upDown, "{connection}", ""},
	metricstest.Max:           {upDown, "{connection}", ""},
	metricstest.IdleMax:       {upDown, "{connection}", ""},
	metricstest.IdleMin:       {upDown, "{connection}", ""},
	metricstest.Pending:       {upDown, "{request}", ""},
	metricstest.Timeouts:      {counter, "{timeout}", ""},
	metricstest.CreateTime:    {histogram, "s", ""},
	metricstest.WaitTime:      {histogram, "s", ""},
	metricstest.UseTime:       {histogram, "s", ""},
	metricstest.Leases:        {upDown, "{lease}", ""},
	metricstest.Dialing:       {upDown, "{connection}", ""},
	metricstest.BudgetShare:   {upDown, "{connection}", ""},
	metricstest.BudgetDemand:  {upDown, "{connection}", ""},
	metricstest.BudgetMembers: {upDown, "{pool}", ""},
	metricstest.DialErrors:    {counter, "{error}", ""},
	metricstest.Closes:        {counter, "{connection}", ""},
	metricstest.Rejections:    {counter, "{request}", ""},
	metricstest.Leaks:         {counter, "{lease}", ""},
	metricstest.BargeMisses:   {counter, "{connection}", "Config.BargeWindow"},
	metricstest.HostOpen:      {upDown, "{connection}", ""},
	metricstest.HostRole:      {upDown, "{host}", ""},
	metricstest.HostLastCheck: {gauge, "s", ""},
	metricstest.HostLag:       {gauge, "s", ""},
}

// otelAttributes are the attributes' neutral names; server.address and
// server.port are joined into host.
var otelAttributes = map[attribute.Key]string{
	shoalotel.AttrPoolName:    "pool",
	shoalotel.AttrState:       "state",
	shoalotel.AttrCloseReason: "reason",
	shoalotel.AttrHostRole:    "role",
}

// Read collects once.
func (s *otelSet) Read(t testing.TB) metricstest.Values {
	t.Helper()
	out := metricstest.Values{}
	for name, m := range collect(t, s.reader) {
		want, ok := otelInstruments[name]
		if !ok {
			t.Errorf("%s: an instrument the package does not document", name)
			continue
		}
		if m.Unit != want.unit {
			t.Errorf("instrument %s has unit %q, want %q", name, m.Unit, want.unit)
		}
		if !strings.Contains(m.Description, want.description) {
			t.Errorf("instrument %s description %q does not say %s", name, m.Description, want.description)
		}
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			if want.kind != upDown && want.kind != counter || data.IsMonotonic != (want.kind == counter) || data.Temporality != metricdata.CumulativeTemporality {
				t.Errorf("instrument %s: monotonic %v, temporality %v; want kind %d, cumulative", name, data.IsMonotonic, data.Temporality, want.kind)
			}
			for _, p := range data.DataPoints {
				out[metricstest.Key(name, s.labels(t, name, p.Attributes)...)] = float64(p.Value)
			}
		case metricdata.Histogram[float64]:
			if want.kind != histogram {
				t.Errorf("instrument %s is a histogram, want kind %d", name, want.kind)
			}
			for _, p := range data.DataPoints {
				out[metricstest.Key(name+".count", s.labels(t, name, p.Attributes)...)] = float64(p.Count)
			}
		case metricdata.Gauge[float64]:
			if want.kind != gauge {
				t.Errorf("instrument %s is a float64 gauge, want kind %d", name, want.kind)
			}
			for _, p := range data.DataPoints {
				out[metricstest.Key(name, s.labels(t, name, p.Attributes)...)] = p.Value
			}
		default:
			t.Errorf("instrument %s is %T", name, m.Data)
		}
	}
	return out
}

// labels returns a point's attributes under their neutral names.
func (s *otelSet) labels(t testing.TB, name string, set attribute.Set) []string {
	var labels []string
	var addr, port string
	for _, kv := range set.ToSlice() {
		switch kv.Key {
		case shoalotel.AttrServerAddress:
			addr = kv.Value.String()
		case shoalotel.AttrServerPort:
			port = kv.Value.String()
		default:
			neutral, ok := otelAttributes[kv.Key]
			if !ok {
				t.Errorf("%s: attribute %s the package does not document", name, kv.Key)
			}
			labels = append(labels, neutral+"="+kv.Value.String())
		}
	}
	if port != "" {
		addr = net.JoinHostPort(addr, port)
	}
	if addr != "" {
		labels = append(labels, "host="+addr)
	}
	return labels
}
