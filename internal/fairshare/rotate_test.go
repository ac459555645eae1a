package fairshare

import (
	"fmt"
	"testing"
	"time"
)

// Ties go round: over n periods every member is first once, and within a
// period the order holds.
func TestRotatedIDs(t *testing.T) {
	const n = 4
	every := time.Second
	t0 := time.Unix(1000, 0)
	firsts := map[int]bool{}
	for p := range n {
		at := t0.Add(time.Duration(p) * every)
		ids := RotatedIDs(n, at, every)
		if fmt.Sprint(ids) != fmt.Sprint(RotatedIDs(n, at.Add(every-1), every)) {
			t.Fatalf("the order changed within a period")
		}
		shares := Divide(1, []Claim{{ids[0], 0, 1, 0}, {ids[1], 0, 1, 0}, {ids[2], 0, 1, 0}, {ids[3], 0, 1, 0}})
		for i, s := range shares {
			if s == 1 {
				firsts[i] = true
			}
		}
	}
	if len(firsts) != n {
		t.Fatalf("over %d periods the one connection went to %v, want every member once", n, firsts)
	}
	if len(RotatedIDs(0, t0, every)) != 0 {
		t.Fatal("ids for no members")
	}
}

// RotatedIDs are the numbers of the members' places in the rotation,
// written %012d.
func TestRotatedIDsFormat(t *testing.T) {
	for _, n := range []int{1, 2, 7, 1000} {
		for _, at := range []int64{0, 3, 999} {
			ids := RotatedIDs(n, time.Unix(at, 0), time.Second)
			rot := int(at % int64(n))
			for i, id := range ids {
				if want := fmt.Sprintf("%012d", (i-rot+n)%n); id != want {
					t.Fatalf("RotatedIDs(%d) at %ds: [%d] = %q, want %q", n, at, i, id, want)
				}
			}
		}
	}
}
