package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusingHTTPTargetFailsOnce guards an HTTP target that answers every
// request with an error status (a wrong password, a wrong path): the probe
// fails once with that status, instead of every case failing on it.
func TestRefusingHTTPTargetFailsOnce(t *testing.T) {
	const secret = "Wr0ng-pw-S3cret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for i, target := range []string{"clickhouse+http://default:" + secret + "@" + host, "http://" + host + "/health"} {
		r := runShoal(t, append([]string{"bench", "--target", target, "--workers", "1"}, benchTimes...)...)
		r.wantCode(t, exitFailed)
		if !strings.Contains(r.stderr, "cannot use") || !strings.Contains(r.stderr, "401 Unauthorized") || strings.Contains(r.stdout, "FAILED") {
			t.Errorf("target %d: want one error naming the status, no case run\nstdout: %s\nstderr: %s", i, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("password printed:\n%s\n%s", r.stdout, r.stderr)
		}
	}
}
