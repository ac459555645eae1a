package shoalhttp

import (
	"testing"

	"github.com/shoalpool/shoal"
)

// An origin's pool under MaxConnsTotal runs on a budget of its own over
// the Transport's, which names itself as the Transport's does, so that an
// acquire error it held back (shoal.AcquireError.Budget) names the cap the
// origins share rather than a Go type of this package.
func TestOriginBudgetIsNamedInAcquireErrors(t *testing.T) {
	tb, err := shoal.NewBudget(4, shoal.BudgetName("shoalhttp"))
	if err != nil {
		t.Fatal(err)
	}
	b := any(&originBudget{first: &firstConns{budget: tb}, name: "https://example.test"})
	n, ok := b.(interface{ Name() string })
	if !ok || n.Name() != "shoalhttp" {
		t.Fatalf("an origin's budget is named %v, want the Transport's budget's name, %q", n, "shoalhttp")
	}
}
