package promtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plainBlocks returns the fenced blocks of a Markdown text that name no
// language: in docs/metrics.md, the PromQL to paste into Prometheus.
func plainBlocks(text string) []string {
	var blocks []string
	var block []string
	in, plain := false, false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, plain, block = true, line == "```", nil
		case in && line == "```":
			if plain {
				blocks = append(blocks, strings.Join(block, "\n"))
			}
			in = false
		case in:
			block = append(block, line)
		}
	}
	return blocks
}

// TestMetricsDocQueryAnswers: the query docs/metrics.md gives for how many
// statements or streams share a busy multiplexed connection answers, in
// the real promtool, with leases over used connections for a pool scraped
// as Prometheus stores it (job and instance labels beside pool_name, and
// db_client_connection_count with its state label). A division whose two
// sides keep different labels matches no series and answers nothing, with
// no error to say so.
func TestMetricsDocQueryAnswers(t *testing.T) {
	raw, err := os.ReadFile(repoFile("docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := plainBlocks(string(raw))
	if len(blocks) != 1 || !strings.Contains(blocks[0], "shoal_pool_leases") {
		t.Fatalf("docs/metrics.md has %d fenced blocks without a language, want the one query of leases per used connection", len(blocks))
	}
	query := blocks[0]

	const series = `{job="app", instance="app:9090", pool_name="orders/pipelined"`
	var expr strings.Builder
	for _, line := range strings.Split(query, "\n") {
		expr.WriteString("          " + line + "\n")
	}
	// 6 statements in flight on 2 busy connections, 1 connection idle.
	tests := fmt.Sprintf(`rule_files: []
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'shoal_pool_leases%[1]s}'
        values: '6 6 6'
      - series: 'db_client_connection_count%[1]s, state="used"}'
        values: '2 2 2'
      - series: 'db_client_connection_count%[1]s, state="idle"}'
        values: '1 1 1'
    promql_expr_test:
      - expr: |
%[2]s        eval_time: 1m
        exp_samples:
          - labels: '%[1]s}'
            value: 3
`, series, expr.String())
	path := filepath.Join(t.TempDir(), "docquery_test.yml")
	if err := os.WriteFile(path, []byte(tests), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(promtoolBin(t), "test", "rules", path).CombinedOutput()
	if err != nil {
		t.Fatalf("the query of docs/metrics.md:\n%s\ndoes not answer 3 for 6 leases on 2 used connections: %v\n%s", query, err, out)
	}
}
