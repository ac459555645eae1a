package shoalpgx

import (
	"testing"

	"github.com/shoalpool/shoal"
)

// The budget of a pipelined pool's two kinds has a name, so that an
// acquire error it held back names it as it would the user's budget
// (shoal.AcquireError.Budget) rather than as a Go type of this package.
func TestPipelineBudgetIsNamedInAcquireErrors(t *testing.T) {
	division, err := shoal.NewBudget(4, shoal.BudgetName("shoalpgx pipeline"))
	if err != nil {
		t.Fatal(err)
	}
	user, err := shoal.NewBudget(10, shoal.BudgetName("orders-db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user shoal.Budget
		want string
	}{
		{user, "orders-db"},                        // the user's budget, which the user named
		{newSlotBudget(1, 0), "shoalpgx pipeline"}, // a budget without a name: the division
	} {
		b := any(&twoBudgets{division: division, user: tc.user})
		n, ok := b.(interface{ Name() string })
		if !ok || n.Name() != tc.want {
			t.Errorf("a pipelined pool's budget under a %T: named %v, want %q", tc.user, n, tc.want)
		}
	}
}
