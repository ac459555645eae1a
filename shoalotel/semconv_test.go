package shoalotel_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/dbconv"
)

// conventional is one db.client.connection.* instrument of OpenTelemetry's
// semantic conventions, as the conventions name it.
type conventional struct {
	name, unit, kind string
	attrs            []attribute.Key // the attributes every point carries
}

// semconvInstrument is what the generated conventions package says of an
// instrument.
type semconvInstrument interface {
	Name() string
	Unit() string
	Description() string
}

// convention is a row of the table below: what it says, and the
// conventions package's instrument to check it against.
type convention struct {
	conventional
	spec semconvInstrument
}

// The conventions' db.client.connection.* instruments, written out: the
// test fails when shoalotel drifts from them, and when the conventions
// package of the version shoalotel.SchemaURL names says otherwise.
var conventions = []convention{
	{conventional{"db.client.connection.count", "{connection}", "updowncounter", []attribute.Key{"db.client.connection.pool.name", "db.client.connection.state"}}, dbconv.ClientConnectionCount{}},
	{conventional{"db.client.connection.idle.max", "{connection}", "updowncounter", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionIdleMax{}},
	{conventional{"db.client.connection.idle.min", "{connection}", "updowncounter", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionIdleMin{}},
	{conventional{"db.client.connection.max", "{connection}", "updowncounter", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionMax{}},
	{conventional{"db.client.connection.pending_requests", "{request}", "updowncounter", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionPendingRequests{}},
	{conventional{"db.client.connection.timeouts", "{timeout}", "counter", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionTimeouts{}},
	{conventional{"db.client.connection.create_time", "s", "histogram", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionCreateTime{}},
	{conventional{"db.client.connection.wait_time", "s", "histogram", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionWaitTime{}},
	{conventional{"db.client.connection.use_time", "s", "histogram", []attribute.Key{"db.client.connection.pool.name"}}, dbconv.ClientConnectionUseTime{}},
}

// TestSemanticConventions checks shoalotel's db.client.connection.*
// instruments one by one against the conventions: name, unit, kind,
// description and the attribute keys of every point, with the state
// attribute's values idle and used.
func TestSemanticConventions(t *testing.T) {
	if shoalotel.SchemaURL != semconv.SchemaURL {
		t.Fatalf("shoalotel.SchemaURL %s, but the conventions checked are %s's", shoalotel.SchemaURL, semconv.SchemaURL)
	}
	if shoalotel.AttrPoolName != semconv.DBClientConnectionPoolNameKey || shoalotel.AttrState != semconv.DBClientConnectionStateKey {
		t.Fatalf("attribute keys %s, %s; the conventions say %s, %s", shoalotel.AttrPoolName, shoalotel.AttrState,
			semconv.DBClientConnectionPoolNameKey, semconv.DBClientConnectionStateKey)
	}

	metrics, reader := newMetrics(t)
	p, err := metrics.Pool("orders-db")
	if err != nil {
		t.Fatal(err)
	}
	// A sequence that gives every instrument a point: dials, waits, uses,
	// a timeout and a leak.
	_, cleanup := metricstest.RunSequence(t, p, func() bool {
		return collect(t, reader).sum(t, "shoal.pool.leaks", "{lease}", true)["db.client.connection.pool.name=orders-db"] == 1
	})
	defer cleanup()
	c := collect(t, reader)

	for _, conv := range conventions {
		want := conv.conventional
		if conv.spec.Name() != want.name || conv.spec.Unit() != want.unit {
			t.Errorf("the table says %s in %s; the conventions package says %s in %s", want.name, want.unit, conv.spec.Name(), conv.spec.Unit())
		}
		m, ok := c[want.name]
		if !ok {
			t.Errorf("%s: no such instrument in the collection", want.name)
			continue
		}
		if m.Unit != want.unit {
			t.Errorf("%s: unit %q, want %q", want.name, m.Unit, want.unit)
		}
		if m.Description != conv.spec.Description() {
			t.Errorf("%s: description %q, the conventions' %q", want.name, m.Description, conv.spec.Description())
		}
		kind, points := describe(m.Data)
		if kind != want.kind {
			t.Errorf("%s: a %s, want a %s", want.name, kind, want.kind)
		}
		if len(points) == 0 {
			t.Errorf("%s: no points", want.name)
		}
		for _, set := range points {
			var keys []attribute.Key
			for _, kv := range set.ToSlice() {
				keys = append(keys, kv.Key)
			}
			if !slices.Equal(keys, want.attrs) {
				t.Errorf("%s: a point with attributes %v, want exactly %v", want.name, keys, want.attrs)
			}
			if v, ok := set.Value(semconv.DBClientConnectionStateKey); ok {
				if s := v.AsString(); s != semconv.DBClientConnectionStateIdle.Value.AsString() && s != semconv.DBClientConnectionStateUsed.Value.AsString() {
					t.Errorf("%s: state %q, want idle or used", want.name, s)
				}
			}
		}
	}
	// Nothing else under the conventions' prefix: shoal's own instruments
	// are shoal.pool.*.
	for name := range c {
		if strings.HasPrefix(name, "db.client.") && !slices.ContainsFunc(conventions, func(x convention) bool { return x.name == name }) {
			t.Errorf("instrument %s is under db.client. but is none of the conventions'", name)
		}
	}
}

// describe returns the kind of an instrument's data, in the conventions'
// words, and the attribute sets of its points.
func describe(data metricdata.Aggregation) (string, []attribute.Set) {
	var sets []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
		if d.IsMonotonic {
			return "counter", sets
		}
		return "updowncounter", sets
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
		return "histogram", sets
	}
	return "unknown", nil
}
