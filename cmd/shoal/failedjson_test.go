package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFailedRunSaysWhyInJSONAndCSV guards the error of a run in which a
// case failed when the output is --json or --csv: no FAILED line is
// printed above it, so the error on stderr names the case and its
// failure instead of pointing at lines that are not there.
func TestFailedRunSaysWhyInJSONAndCSV(t *testing.T) {
	for _, format := range []string{"--json", "--csv"} {
		// The probe's request succeeds; every one after it fails.
		var served atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if served.Add(1) > 1 {
				http.Error(w, "gone away", http.StatusServiceUnavailable)
			}
		}))
		r := runShoal(t, append([]string{"bench", "--target", srv.URL + "/", "--only", "churn", "--workers", "1", format}, benchTimes...)...)
		srv.Close()
		r.wantCode(t, exitFailed)
		if strings.Contains(r.stderr, "lines above") || !strings.Contains(r.stderr, "churn/reused_transport") || !strings.Contains(r.stderr, "503 Service Unavailable") {
			t.Errorf("%s: stderr does not name the failed cases and why:\n%s", format, r.stderr)
		}
	}
}
