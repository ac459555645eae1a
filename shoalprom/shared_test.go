package shoalprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestShared runs the tests shoalotel runs too, with and without a
// namespace and constant labels.
func TestShared(t *testing.T) {
	t.Run("plain", func(t *testing.T) { metricstest.Run(t, backend(shoalprom.Options{})) })
	t.Run("namespace", func(t *testing.T) {
		metricstest.Run(t, backend(shoalprom.Options{Namespace: "app", ConstLabels: prometheus.Labels{"env": "test"}}))
	})
}

func backend(opts shoalprom.Options) metricstest.Backend {
	return metricstest.Backend{
		New: func(t testing.TB) metricstest.Set {
			reg := prometheus.NewPedanticRegistry()
			c := newCollector(t, opts)
			reg.MustRegister(c)
			return &promSet{opts: opts, c: c, reg: reg}
		},
		ErrDuplicatePool: shoalprom.ErrDuplicatePool,
	}
}

// promSet is a Collector registered with a registry of its own.
type promSet struct {
	opts shoalprom.Options
	c    *shoalprom.Collector
	reg  *prometheus.Registry
}

func (s *promSet) Pool(name string) (metricstest.Metrics, error) {
	return metricstest.Registered(s.c.Pool(name))
}

// promFamily is what the package doc says of one metric family: its
// neutral name and its type, and a phrase its help must hold.
type promFamily struct {
	name string
	typ  dto.MetricType
	help string
}

// promFamilies are the families a Collector exports, by name without the
// namespace.
var promFamilies = map[string]promFamily{
	"db_client_connection_count":                   {metricstest.Count, dto.MetricType_GAUGE, ""},
	"db_client_connection_max":                     {metricstest.Max, dto.MetricType_GAUGE, ""},
	"db_client_connection_idle_max":                {metricstest.IdleMax, dto.MetricType_GAUGE, ""},
	"db_client_connection_idle_min":                {metricstest.IdleMin, dto.MetricType_GAUGE, ""},
	"db_client_connection_pending_requests":        {metricstest.Pending, dto.MetricType_GAUGE, ""},
	"db_client_connection_timeouts_total":          {metricstest.Timeouts, dto.MetricType_COUNTER, ""},
	"db_client_connection_create_time_seconds":     {metricstest.CreateTime, dto.MetricType_HISTOGRAM, ""},
	"db_client_connection_wait_time_seconds":       {metricstest.WaitTime, dto.MetricType_HISTOGRAM, ""},
	"db_client_connection_use_time_seconds":        {metricstest.UseTime, dto.MetricType_HISTOGRAM, ""},
	"shoal_pool_leases":                            {metricstest.Leases, dto.MetricType_GAUGE, ""},
	"shoal_pool_dialing":                           {metricstest.Dialing, dto.MetricType_GAUGE, ""},
	"shoal_pool_budget_share":                      {metricstest.BudgetShare, dto.MetricType_GAUGE, ""},
	"shoal_pool_budget_demand":                     {metricstest.BudgetDemand, dto.MetricType_GAUGE, ""},
	"shoal_pool_budget_members":                    {metricstest.BudgetMembers, dto.MetricType_GAUGE, ""},
	"shoal_pool_dial_errors_total":                 {metricstest.DialErrors, dto.MetricType_COUNTER, ""},
	"shoal_pool_closes_total":                      {metricstest.Closes, dto.MetricType_COUNTER, ""},
	"shoal_pool_rejections_total":                  {metricstest.Rejections, dto.MetricType_COUNTER, ""},
	"shoal_pool_leaks_total":                       {metricstest.Leaks, dto.MetricType_COUNTER, ""},
	"shoal_pool_barge_misses_total":                {metricstest.BargeMisses, dto.MetricType_COUNTER, "Config.BargeWindow"},
	"shoal_pool_host_connection_open":              {metricstest.HostOpen, dto.MetricType_GAUGE, ""},
	"shoal_pool_host_role":                         {metricstest.HostRole, dto.MetricType_GAUGE, ""},
	"shoal_pool_host_last_check_timestamp_seconds": {metricstest.HostLastCheck, dto.MetricType_GAUGE, ""},
	"shoal_pool_host_lag_seconds":                  {metricstest.HostLag, dto.MetricType_GAUGE, ""},
}

// promLabels are the labels' neutral names.
var promLabels = map[string]string{
	shoalprom.LabelPoolName: "pool",
	shoalprom.LabelState:    "state",
	shoalprom.LabelReason:   "reason",
	shoalprom.LabelHost:     "host",
	shoalprom.LabelRole:     "role",
}

// Read gathers the registry once.
func (s *promSet) Read(t testing.TB) metricstest.Values {
	t.Helper()
	fam, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := metricstest.Values{}
	for _, f := range fam {
		name := f.GetName()
		if s.opts.Namespace != "" {
			var ok bool
			if name, ok = strings.CutPrefix(name, s.opts.Namespace+"_"); !ok {
				t.Errorf("%s: not in namespace %s", f.GetName(), s.opts.Namespace)
			}
		}
		want, ok := promFamilies[name]
		if !ok {
			t.Errorf("%s: a family the package does not document", f.GetName())
			continue
		}
		if f.GetType() != want.typ {
			t.Errorf("%s has type %s, want %s", f.GetName(), f.GetType(), want.typ)
		}
		if !strings.Contains(f.GetHelp(), want.help) {
			t.Errorf("%s help %q does not say %s", f.GetName(), f.GetHelp(), want.help)
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if v, ok := s.opts.ConstLabels[l.GetName()]; ok && v == l.GetValue() {
					continue
				}
				neutral, ok := promLabels[l.GetName()]
				if !ok {
					t.Errorf("%s: label %s the package does not document", f.GetName(), l.GetName())
				}
				labels = append(labels, neutral+"="+l.GetValue())
			}
			if len(m.GetLabel())-len(labels) != len(s.opts.ConstLabels) {
				t.Errorf("%s{%s}: the constant labels %v missing", f.GetName(), labelsOf(m), s.opts.ConstLabels)
			}
			if h := m.GetHistogram(); h != nil {
				out[metricstest.Key(want.name+".count", labels...)] = float64(h.GetSampleCount())
				continue
			}
			out[metricstest.Key(want.name, labels...)] = value(m)
		}
	}
	return out
}
