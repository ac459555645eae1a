package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// benchTarget runs bench --json against target and returns the report,
// failing the test unless it ran cleanly.
func benchTarget(t *testing.T, target string, extra ...string) (benchrun.Report, result) {
	t.Helper()
	args := append([]string{"bench", "--target", target, "--json", "--workers", "4"}, benchTimes...)
	r := runShoal(t, append(args, extra...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	return rep, r
}

// measuredNames lists the cases of rep that produced numbers.
func measuredNames(t *testing.T, rep benchrun.Report) []string {
	t.Helper()
	var names []string
	for _, s := range rep.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == benchrun.StatusOK && res.IPS > 0 && res.Ops > 0 {
					names = append(names, s.Name+"/"+res.Name)
				}
			}
		}
	}
	return names
}

// TestHTTPTarget runs the HTTP experiments against a local server standing
// in for a user's, and checks that the credentials in the URL are sent as
// basic auth and never printed.
func TestHTTPTarget(t *testing.T) {
	const secret = "Basic-S3cret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "bench" || p != secret {
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/" && r.URL.Query().Get("query") != "SELECT 1" {
			http.Error(w, "want ?query=SELECT 1", http.StatusBadRequest)
			return
		}
		w.Write([]byte("1\n"))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	rep, r := benchTarget(t, "clickhouse+http://bench:"+secret+"@"+host)
	got := strings.Join(measuredNames(t, rep), " ")
	for _, want := range []string{"churn/reused_transport", "churn/shoalhttp", "churn/new_transport_per_request", "transport/default_transport", "transport/tuned_transport", "transport/shoalhttp"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s not measured; measured: %s", want, got)
		}
	}
	if strings.Contains(r.stdout+r.stderr, secret) {
		t.Errorf("password printed:\n%s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(rep.Target, "REDACTED") {
		t.Errorf("report's target %q is not redacted", rep.Target)
	}
}

// TestServiceTargets runs bench against the test environment's ClickHouse,
// InfluxDB, etcd and PostgreSQL when their addresses are set.
func TestServiceTargets(t *testing.T) {
	for _, tc := range []struct {
		env, prefix, want string
		extra             []string
	}{
		{"SHOAL_TEST_CLICKHOUSE", "clickhouse+", "transport/shoalhttp", []string{"--only", "transport"}},
		{"SHOAL_TEST_INFLUXDB", "influxdb+", "churn/shoalhttp", []string{"--only", "churn"}},
		{"SHOAL_TEST_ETCD", "grpc://", "multiplex/shoalgrpc_2_conns", []string{"--only", "multiplex"}},
		{"SHOAL_TEST_POSTGRES", "", "churn/shoalpgx_pool", []string{"--only", "churn"}},
		// pool_pipeline beside whole connections.
		{"SHOAL_TEST_POSTGRES", "", "multiplex/pipelined_8_conns", []string{"--only", "multiplex"}},
	} {
		t.Run(tc.env, func(t *testing.T) {
			addr := os.Getenv(tc.env)
			if addr == "" {
				if requireServices() {
					t.Fatalf("%s is not set and SHOAL_REQUIRE_SERVICES=1", tc.env)
				}
				t.Skipf("%s not set (. scripts/test-env.sh)", tc.env)
			}
			rep, _ := benchTarget(t, tc.prefix+addr, tc.extra...)
			if got := strings.Join(measuredNames(t, rep), " "); !strings.Contains(got, tc.want) {
				t.Errorf("%s not measured; measured: %s", tc.want, got)
			}
		})
	}
}

// TestPostgresTargetAsTyped: a URL scheme is case-insensitive and a target
// pasted with a space around it is the same target. pgx reads neither as a
// URL (it wants "postgres://" exactly), but as one keyword=value pair, and
// logs into the local socket as the system user, with the URL, password
// and all, sent to the server as a parameter name.
func TestPostgresTargetAsTyped(t *testing.T) {
	dsn := postgresDSN(t)
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		t.Fatalf("SHOAL_TEST_POSTGRES %q is not a URL", redactRaw(dsn))
	}
	for _, target := range []string{strings.ToUpper(scheme) + "://" + rest, " " + dsn + " "} {
		rep, _ := benchTarget(t, target, "--only", "churn")
		if got := strings.Join(measuredNames(t, rep), " "); !strings.Contains(got, "churn/shoalpgx_pool") {
			t.Errorf("%q: churn/shoalpgx_pool not measured; measured: %s", redactRaw(target), got)
		}
	}
}

// TestMultiplexHeadingFitsTheTarget: against a server of the user's, the
// multiplex scenario's heading describes what runs there, not the
// embedded server's cap of 100 streams per connection: against
// PostgreSQL, pipelined connections beside whole ones; against gRPC, the
// server's own limit.
func TestMultiplexHeadingFitsTheTarget(t *testing.T) {
	for _, tc := range []struct{ env, prefix, want string }{
		{"SHOAL_TEST_POSTGRES", "", "pool_pipeline=16"},
		{"SHOAL_TEST_ETCD", "grpc://", "as many streams as the server allows"},
	} {
		addr := os.Getenv(tc.env)
		if addr == "" {
			skipOrFail(t, tc.env+" is not set")
		}
		rep, _ := benchTarget(t, tc.prefix+addr, "--only", "multiplex")
		d := rep.Scenarios[0].Description
		if strings.Contains(d, "capping streams at 100") || !strings.Contains(d, tc.want) {
			t.Errorf("%s: heading %q, want one with %q and no cap of 100", tc.env, d, tc.want)
		}
	}
}
