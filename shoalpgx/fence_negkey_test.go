package shoalpgx

import "testing"

// negativeFenceKeyFor is a negative fence key of the test's own, the kind
// half of all budget names hash to, and never one of fenceKeyFor's.
func negativeFenceKeyFor(t *testing.T) int32 { return -fenceKeyFor(t) - 1 }

// A negative fence key shows in pg_locks as an unsigned classid: the
// refusal must name it that way, or the query it suggests finds no holder.
func TestBudgetFenceNamesANegativeKeyAsPgLocksShowsIt(t *testing.T) {
	fenceRefusesASlotAnotherSessionHolds(t, negativeFenceKeyFor(t))
}

// The look before a dial must find a lock under a negative key too, or a
// suspect slot costs a connection at the server before the lock refuses it.
func TestBudgetFenceLooksBeforeItDialsWithANegativeKey(t *testing.T) {
	fenceLooksBeforeItDials(t, negativeFenceKeyFor(t), 0)
}

// The look through a shared connection writes the key into its statement:
// a negative one must be cast as an int4, not read as a negated oid.
func TestPipelineFenceLooksThroughASharedConnectionWithANegativeKey(t *testing.T) {
	pipelineFenceLooksThroughASharedConnection(t, negativeFenceKeyFor(t))
}
