package shoalprom_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestNewRefusesBadOptions: options Prometheus would refuse fail New with
// an error that names the field, instead of a panic in MustRegister or in
// the first Pool.
func TestNewRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		opts shoalprom.Options
		want string // in the error
	}{
		{"buckets out of order", shoalprom.Options{Buckets: []float64{1, 0.5}}, "shoalprom: Options.Buckets must be in increasing order, got [1 0.5]"},
		{"a bucket twice", shoalprom.Options{Buckets: []float64{0.5, 0.5}}, "Options.Buckets"},
		{"a constant label the metrics vary by", shoalprom.Options{ConstLabels: prometheus.Labels{shoalprom.LabelPoolName: "x"}}, "ConstLabels"},
		{"an empty label name", shoalprom.Options{ConstLabels: prometheus.Labels{"": "x"}}, "ConstLabels"},
	} {
		if _, err := shoalprom.New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	var cfgErr *shoal.ConfigError
	if _, err := shoalprom.New(shoalprom.Options{Buckets: []float64{2, 1}}); !errors.As(err, &cfgErr) || cfgErr.Field != "Buckets" {
		t.Errorf("buckets out of order: %v, want a *shoal.ConfigError for Buckets", err)
	}
	if _, err := shoalprom.New(shoalprom.Options{Namespace: "app", Buckets: []float64{0.1, 1}, ConstLabels: prometheus.Labels{"env": "test"}}); err != nil {
		t.Errorf("good options refused: %v", err)
	}
}
