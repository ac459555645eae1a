package poolmetrics

import (
	"fmt"
	"slices"

	"github.com/shoalpool/shoal"
)

// reasons holds the label of each shoal.Reason the core knows, indexed by
// the Reason. It is found by asking Reason.String, which answers
// "reason(N)" past the last known one, so a reason added to the core is
// picked up without a change here.
var reasons = func() []string {
	labels := []string{""} // Reason 0 is not a reason
	for r := shoal.Reason(1); r < 64; r++ {
		s := r.String()
		if s == fmt.Sprintf("reason(%d)", int(r)) {
			break
		}
		labels = append(labels, s)
	}
	return labels
}()

// ReasonLabels returns the label of each shoal.Reason the core knows,
// indexed by the Reason, with "" at 0, which is no reason: what a pool's
// close counter is bound to when it is registered. A reason past the end
// is one the core added later; its label is Reason.String().
func ReasonLabels() []string { return slices.Clone(reasons) }
