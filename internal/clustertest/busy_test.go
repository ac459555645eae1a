//go:build unix

package clustertest

import (
	"math"
	"testing"
	"time"
)

// All busy: four workers start together, each wanting all N. Once all have
// joined, the budget gives each a share within one of N/4 within 2
// seconds, each then holds its share, and stays there;
// no query fails and no connection is dropped on the way, although the
// first to join held all N and had to shrink as the others came.
func TestAllBusy(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{sharedEtcd(t)}, nil)
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	began := ps[0].started
	tj := joined(t, ps...)
	tf := fairIn(t, ps, size/workers, "each within one of N/4")
	settled := time.Now()
	fromStart := settled.Sub(began)
	te := settle(t, ps, "each exactly N/4", func() (bool, string) {
		return exactly(ps, 3, 3, 3, 3)
	})
	t.Logf("measured: all joined %v after the first start; each within one of N/4 %v later (%v after the first start), exactly N/4 %v after that",
		tj.Round(time.Millisecond), tf.Round(time.Millisecond), fromStart.Round(time.Millisecond), te.Round(time.Millisecond))

	time.Sleep(2 * time.Second)
	for _, p := range ps {
		for _, r := range p.since(settled) {
			if math.Abs(float64(r.Open)-size/workers) > 1 {
				t.Errorf("worker %s held %d at %s, after settling at N/4", p.label, r.Open, time.UnixMilli(r.At).Format("15:04:05.000"))
			}
		}
	}
	unharmed(t, ps...)
}
