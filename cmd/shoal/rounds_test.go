package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestInterruptedRoundsAreEven: after Ctrl-C in the second round, every
// case that finished a round keeps as many rounds as every other (the
// rounds they all finished), so that the table's "mean of N rounds", its
// round-by-round comparison and its connection counts mean the same for
// every row. Here the third case, first in the reversed second round,
// finished two rounds, and the second was interrupted in its setup.
func TestInterruptedRoundsAreEven(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	round := map[string]int{}
	mk := func(name string) benchrun.Case {
		return benchrun.Case{Name: name, Setup: func(context.Context) (*benchrun.Instance, error) {
			round[name]++
			if name == "b" && round[name] == 2 {
				cancel() // Ctrl-C while b sets up in round 2
				return nil, ctx.Err()
			}
			return &benchrun.Instance{Op: func(context.Context) (time.Duration, error) { return 0, nil }}, nil
		}}
	}
	cases := []benchrun.Case{mk("a"), mk("b"), mk("c")}
	o := &options{duration: 5 * time.Millisecond, dialTimeout: time.Second}
	out := runRounds(ctx, o, cases, 1, 3, nil, func(c benchrun.Case) string { return c.Name })
	for i, rs := range out {
		var statuses []benchrun.Status
		for _, r := range rs {
			statuses = append(statuses, r.Status)
		}
		if len(rs) != 1 || rs[0].Status != benchrun.StatusOK {
			t.Errorf("%s: rounds %v, want the one round every case finished", cases[i].Name, statuses)
		}
	}
	if m := mergeRounds(out[2]); len(m.RoundIPS) > 1 {
		t.Errorf("c's row has %d rounds: %s", len(m.RoundIPS), fmt.Sprint(m.RoundIPS))
	}
}
