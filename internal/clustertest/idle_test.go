//go:build unix

package clustertest

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// idleTime is the scenarios' IdleTime: shoaletcd's default, said outright
// because the idle scenario measures against it.
const idleTime = 2 * time.Second

// One idle: of four busy workers one goes idle. It keeps its minimum and
// gives the rest back: its share within its idle time (plus the time to
// publish), its connections as the pool closes what it no longer may hold;
// the other three share what it gave back, each within one of (N-Min)/3,
// and no query fails; busy again, the budget gives it its share back
// within 2 seconds.
func TestOneIdle(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{sharedEtcd(t)}, func(s *spec) { s.idle = idleTime })
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, ps...)
	settle(t, ps, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

	idle, rest := ps[0], ps[1:]
	idle.setLoad(0)
	gaveBack := waitFor(t, idleTime+time.Second, "the idle worker's share down to its minimum", func() (bool, string) {
		r, ok := fresh(idle)
		return ok && r.Share == minShare, holding(ps)
	})
	gaveBack += settle(t, ps, "the idle worker down to its minimum", func() (bool, string) {
		r, ok := fresh(idle)
		return ok && r.Open == minShare && r.Share == minShare, holding(ps)
	})
	others := fairIn(t, rest, float64(size-minShare)/3, "the others within one of (N-Min)/3")
	exact := settle(t, rest, "the others at 4, 4 and 3", func() (bool, string) {
		var opens []int
		for _, p := range rest {
			r, ok := fresh(p)
			if !ok || r.Open != r.Share {
				return false, holding(ps)
			}
			opens = append(opens, r.Open)
		}
		slices.Sort(opens)
		return slices.Equal(opens, []int{3, 4, 4}), fmt.Sprintf("%v: %s", opens, holding(ps))
	})
	t.Logf("measured: idle worker at its minimum %v after going idle (IdleTime %v); the others within one of (N-Min)/3 %v later, at 4/4/3 %v after that",
		gaveBack.Round(time.Millisecond), idleTime, others.Round(time.Millisecond), exact.Round(time.Millisecond))

	idle.setLoad(busy)
	back := fairIn(t, ps, size/workers, "all four within one of N/4 again")
	t.Logf("measured: busy again, within one of N/4 %v later", back.Round(time.Millisecond))
	unharmed(t, ps...)
}
