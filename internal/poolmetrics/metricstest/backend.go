package metricstest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shoalpool/shoal"
)

// Backend is shoalprom or shoalotel as the shared tests (Run) drive it.
type Backend struct {
	// New returns an empty set of pools (a Collector, a Metrics), set up
	// to be read.
	New func(testing.TB) Set
	// ErrDuplicatePool is the package's error for a name in use.
	ErrDuplicatePool error
}

// Set is a shoalprom Collector or a shoalotel Metrics, with a way to read
// what it reports.
type Set interface {
	// Pool registers a pool name: Collector.Pool, Metrics.Pool.
	Pool(name string) (Metrics, error)
	// Read scrapes or collects once and returns every value, by neutral
	// key (see Values). It fails the test when a metric has a name, type,
	// unit or label the package does not document.
	Read(testing.TB) Values
}

// Registered returns what a package's Pool method returned as a Set's
// Pool does: m as Metrics, or nil and err.
func Registered[M Metrics](m M, err error) (Metrics, error) {
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Metrics is either package's PoolMetrics.
type Metrics interface {
	shoal.Observer
	// Name returns the pool's name, the label the series carry.
	Name() string
	// Attach reads the pool's gauges from stats until detach is called.
	Attach(stats func() shoal.Stats) (detach func())
	// AttachHosts reads the per-host gauges from hosts until detach is
	// called.
	AttachHosts(hosts func() []shoal.HostStat) (detach func())
	// Unregister ends every series of the pool.
	Unregister()
}

// Values are what one read of a Set reports, by a key that reads the same
// for both packages: the OpenTelemetry instrument's name, then the labels
// in braces under neutral names (pool, state, reason, host, role), sorted:
// "shoal.pool.host.role{host=db-a:5432,pool=orders,role=primary}". host is
// shoal.HostStat.Addr, whole. A histogram reports its count, under its
// name with ".count" added.
type Values map[string]float64

// The neutral names of the metrics, the OpenTelemetry instruments'.
const (
	Count         = "db.client.connection.count"
	Max           = "db.client.connection.max"
	IdleMax       = "db.client.connection.idle.max"
	IdleMin       = "db.client.connection.idle.min"
	Pending       = "db.client.connection.pending_requests"
	Timeouts      = "db.client.connection.timeouts"
	CreateTime    = "db.client.connection.create_time"
	WaitTime      = "db.client.connection.wait_time"
	UseTime       = "db.client.connection.use_time"
	Leases        = "shoal.pool.leases"
	Dialing       = "shoal.pool.dialing"
	BudgetShare   = "shoal.pool.budget.share"
	BudgetDemand  = "shoal.pool.budget.demand"
	BudgetMembers = "shoal.pool.budget.members"
	DialErrors    = "shoal.pool.dial_errors"
	Closes        = "shoal.pool.closes"
	Rejections    = "shoal.pool.rejections"
	Leaks         = "shoal.pool.leaks"
	BargeMisses   = "shoal.pool.barge_misses"
	HostOpen      = "shoal.pool.host.connection.open"
	HostRole      = "shoal.pool.host.role"
	HostLastCheck = "shoal.pool.host.last_check.timestamp"
	HostLag       = "shoal.pool.host.lag"
)

// HostNames are the per-host metrics.
var HostNames = []string{HostOpen, HostRole, HostLastCheck, HostLag}

// Key returns the key of name with labels, each "name=value", in any
// order.
func Key(name string, labels ...string) string {
	labels = slices.Clone(labels)
	slices.Sort(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// Only returns the values of the metrics named.
func (v Values) Only(names ...string) Values {
	out := Values{}
	for k, x := range v {
		name, _, _ := strings.Cut(k, "{")
		if slices.Contains(names, name) {
			out[k] = x
		}
	}
	return out
}

// check fails the test unless got is exactly want.
func check(t testing.TB, when string, got, want Values) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s:\n got %v\nwant %v", when, got, want)
	}
}

// register registers name in set, failing the test when it cannot.
func register(t testing.TB, set Set, name string) Metrics {
	t.Helper()
	m, err := set.Pool(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
