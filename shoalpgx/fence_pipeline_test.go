package shoalpgx

import "testing"

// With pipelining a dial's permit is the division's of MaxConns and the
// user's budget's together (twoPermits), and the look before the dial must
// see through it that the user's slot is suspect: else the look takes only
// a connection idle at that moment, and on a busy pool the dial connects
// and the server counts one connection above the budget until the lock
// refuses it.
func TestBudgetFenceLooksBeforeItDialsWithPipelining(t *testing.T) {
	fenceLooksBeforeItDials(t, fenceKeyFor(t), 4)
}
