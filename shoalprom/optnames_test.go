package shoalprom_test

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestNewRefusesNamesScrapersRename: client_golang registers any UTF-8
// name, but a scraper that does not ask for UTF-8 names gets the metric
// and label names escaped (my-app becomes my_app, 1x becomes _x), and one
// older than that fails the whole scrape on a colon in a label name; a
// constant label le makes the first Pool panic. New refuses all of them,
// naming the field, the value and the rule.
func TestNewRefusesNamesScrapersRename(t *testing.T) {
	const rule = "must be ASCII letters, digits and underscores, not starting with a digit"
	for _, c := range []struct {
		opts  shoalprom.Options
		field string
		want  string // the whole error
	}{
		{shoalprom.Options{Namespace: "my-app"}, "Namespace", `shoalprom: Options.Namespace ` + rule + `, got "my-app"`},
		{shoalprom.Options{Namespace: "1x"}, "Namespace", `shoalprom: Options.Namespace ` + rule + `, got "1x"`},
		{shoalprom.Options{Namespace: "my.app"}, "Namespace", `shoalprom: Options.Namespace ` + rule + `, got "my.app"`},
		{shoalprom.Options{Namespace: "app:x"}, "Namespace", `shoalprom: Options.Namespace ` + rule + `, got "app:x"`},
		{shoalprom.Options{Namespace: "café"}, "Namespace", `shoalprom: Options.Namespace ` + rule + `, got "café"`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"my-label": "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels names ` + rule + `, got "my-label"`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"x:y": "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels names ` + rule + `, got "x:y"`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"ok": "x", "": "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels names ` + rule + `, got ""`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"__env": "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels names must not start with __, which Prometheus keeps for itself, got "__env"`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"le": "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels must not name "le", the bucket label of the histograms`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{shoalprom.LabelState: "x"}}, "ConstLabels", `shoalprom: Options.ConstLabels must not name "state", a label the metrics vary by`},
		{shoalprom.Options{ConstLabels: prometheus.Labels{"env": "\xff"}}, "ConstLabels", `shoalprom: Options.ConstLabels values must be valid UTF-8, got "\xff" for env`},
	} {
		_, err := shoalprom.New(c.opts)
		var cfgErr *shoal.ConfigError
		if err == nil || err.Error() != c.want || !errors.As(err, &cfgErr) || cfgErr.Field != c.field {
			t.Errorf("New(%+v): %v\nwant a *shoal.ConfigError for %s: %s", c.opts, err, c.field, c.want)
		}
	}

	for _, opts := range []shoalprom.Options{
		{Namespace: "myapp"},
		{Namespace: "_my_app2"},
		{Namespace: "MyApp"},
		{ConstLabels: prometheus.Labels{"env": "prod", "Region_2": "eu-west-1", "_x": "é"}},
		// Names the per-host gauges use: those are left out instead.
		{ConstLabels: prometheus.Labels{shoalprom.LabelHost: "a", shoalprom.LabelRole: "b"}},
	} {
		c, err := shoalprom.New(opts)
		if err != nil {
			t.Errorf("New(%+v): %v, want no error", opts, err)
			continue
		}
		if _, err := c.Pool("p"); err != nil {
			t.Errorf("New(%+v).Pool: %v", opts, err)
		}
	}
}
