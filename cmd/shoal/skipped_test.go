package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestNothingMeasuredSaysWhyInJSONAndCSV guards the reason a run measured
// nothing when the output is --json or --csv: no table lines hold it, so
// the error on stderr must.
func TestNothingMeasuredSaysWhyInJSONAndCSV(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, format := range []string{"--json", "--csv"} {
		r := runShoal(t, "bench", "--target", srv.URL+"/", "--only", "multiplex", format)
		r.wantCode(t, exitFailed)
		if !strings.Contains(r.stderr, "multiplex: does not fit the http:// target") || strings.Contains(r.stderr, "lines above") {
			t.Errorf("%s: stderr does not say why nothing was measured:\n%s", format, r.stderr)
		}
	}
}
