package shoalprom

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shoalpool/shoal"
)

// checkNames returns the error for a Namespace or ConstLabels name the
// metrics' names and labels cannot be made of, nil when all can be.
//
// client_golang takes any UTF-8 name, but only one of ASCII letters,
// digits and underscores reaches every scraper as it was written: a
// scraper that does not ask for UTF-8 names gets the others escaped
// ("my-app" becomes my_app, "1x" becomes _x, two namespaces may become
// one), and one that does stores a name PromQL must quote. Either way a
// rule or panel written with the name the options gave finds nothing, far
// from the cause, so the error comes here. A colon is valid in a metric
// name but reserved for recording rules, and older scrapers fail the whole
// scrape on one in a label name.
func checkNames(opts Options) error {
	if ns := opts.Namespace; ns != "" && !isPlainName(ns) {
		return &shoal.ConfigError{Struct: "shoalprom.Options", Field: "Namespace",
			Reason: fmt.Sprintf("must be ASCII letters, digits and underscores, not starting with a digit, got %q", ns)}
	}
	// Sorted, so that the error is the same from one run to the next.
	names := make([]string, 0, len(opts.ConstLabels))
	for name := range opts.ConstLabels {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		reason := ""
		switch {
		case !isPlainName(name):
			reason = fmt.Sprintf("names must be ASCII letters, digits and underscores, not starting with a digit, got %q", name)
		case strings.HasPrefix(name, "__"):
			reason = fmt.Sprintf("names must not start with __, which Prometheus keeps for itself, got %q", name)
		case name == LabelPoolName || name == LabelState || name == LabelReason:
			reason = fmt.Sprintf("must not name %q, a label the metrics vary by", name)
		case name == "le":
			// client_golang refuses it on a histogram by panicking, in
			// the first Pool rather than at registration.
			reason = `must not name "le", the bucket label of the histograms`
		case !utf8.ValidString(opts.ConstLabels[name]):
			reason = fmt.Sprintf("values must be valid UTF-8, got %q for %s", opts.ConstLabels[name], name)
		}
		if reason != "" {
			return &shoal.ConfigError{Struct: "shoalprom.Options", Field: "ConstLabels", Reason: reason}
		}
	}
	return nil
}

// isPlainName reports whether s is a non-empty name of ASCII letters,
// digits and underscores that does not start with a digit.
func isPlainName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
