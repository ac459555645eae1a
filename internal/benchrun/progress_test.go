package benchrun

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestProgressFitsAnEightyColumnTerminal: each drawing of the bar fits in
// 80 columns, a long step label cut short, since a line that wraps leaves
// its first row behind at every redraw ("\r" returns to the last row
// only), and the terminal fills with copies of it.
func TestProgressFitsAnEightyColumnTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := &Progress{w: &buf, total: 10 * time.Minute}
	long := "round 100/100: partitions/pipelined_8_conns (128 workers, SELECT 1)"
	p.Begin(long, time.Second)
	p.Begin("round 1/3: churn/pooled (8 workers)", time.Second)
	lines := strings.Split(buf.String(), "\r\033[K")
	for _, line := range lines[1:] {
		if n := utf8.RuneCountInString(line); n >= 80 {
			t.Errorf("a drawing of %d columns: %q", n, line)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, "round 1/3: churn/pooled (8 workers)") {
		t.Errorf("a label that fits is cut: %q", last)
	}
}
