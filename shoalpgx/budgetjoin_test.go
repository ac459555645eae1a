package shoalpgx

import (
	"context"
	"errors"
	"testing"

	"github.com/shoalpool/shoal"
)

// refusingBudget refuses every pool, as a budget that already serves one
// refuses a second.
type refusingBudget struct{ slotBudget }

var errServesOne = errors.New("budget serves a pool already")

func (*refusingBudget) Join(shoal.BudgetMember) (func(), error) { return nil, errServesOne }

// A budget that refuses the pool fails NewWithConfig with its reason, never
// a panic.
func TestBudgetThatRefusesThePoolFailsNew(t *testing.T) {
	cfg, err := ParseConfig("postgres://shoal@127.0.0.1:1/db")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Budget = &refusingBudget{}
	p, err := NewWithConfig(context.Background(), cfg)
	if !errors.Is(err, errServesOne) {
		if p != nil {
			p.Close()
		}
		t.Fatalf("NewWithConfig: %v, want the budget's refusal", err)
	}
	t.Log(err)
}
