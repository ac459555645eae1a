package main

import (
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/embedded"
)

// TestGroupTitlesSayOneWorker: with --workers 1, every table's title says
// "1 worker", as its legend does, on the embedded servers and against each
// kind of target, and in the sweep's.
func TestGroupTitlesSayOneWorker(t *testing.T) {
	servers, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer servers.Close()
	envs := map[string]*env{"embedded": {servers: servers, workers: 1}}
	for _, raw := range []string{"postgres://u@127.0.0.1:1/db", "https://127.0.0.1:1/", "grpc://127.0.0.1:1", "clickhouse+http://127.0.0.1:1"} {
		tg, err := parseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		envs[raw] = &env{target: tg, workers: 1}
	}
	for where, e := range envs {
		for _, s := range allScenarios {
			p, err := s.plan(e)
			if err != nil {
				t.Fatalf("%s, %s: %v", where, s.name, err)
			}
			for _, g := range p.groups {
				if !strings.Contains(g.Title, "1 worker") || strings.Contains(g.Title, "1 workers") {
					t.Errorf("%s, %s: title %q, want 1 worker", where, s.name, g.Title)
				}
			}
		}
	}

	r := runShoal(t, append([]string{"sweep", "--target", postgresDSN(t), "--workers", "1", "--max-conns", "2", "--rounds", "2", "--csv"}, testTimes...)...)
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, `"1 worker, SELECT 1, 2 rounds"`) {
		t.Errorf("sweep's group is not titled 1 worker:\n%s", r.stdout)
	}
}
