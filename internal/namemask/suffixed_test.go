package namemask

import (
	"strings"
	"testing"
)

// suffixedCases are names and what their read pool's name shows.
var suffixedCases = []struct{ name, want string }{
	{"orders", "orders/reads"},
	{"db1:5432/app", "db1:5432/app/reads"},
	{"orders password=pw", "orders password=xxxxx /reads"},
	{"host=db password=pw", "host=db password=xxxxx /reads"},
	{"orders password='p w'", "orders password='xxxxx'/reads"},
	{"postgres://u:pw@db/app", "postgres://u:xxxxx@db/app/reads"},
	{"orders password=pw/reads", "orders password=xxxxx /reads"},
	{"postgres://u@db/x?password=pw", "postgres://u@db/x?password=xxxxx&/reads"},
	{"postgres://u:pw@db/x?sslmode=disable&token=pw", "postgres://u:xxxxx@db/x?sslmode=disable&token=xxxxx&/reads"},
	{"orders token=", "orders token='xxxxx'/reads"},
	{"orders password = ", "orders password = 'xxxxx'/reads"},
}

// A derived pool's name keeps its suffix through the masking, and shows
// no password.
func TestSuffixed(t *testing.T) {
	for _, c := range suffixedCases {
		got := Mask(Suffixed(c.name, "/reads"))
		if got != c.want {
			t.Errorf("Mask(Suffixed(%q, %q)) = %q, want %q", c.name, "/reads", got, c.want)
		}
		if got == Mask(c.name) {
			t.Errorf("Suffixed(%q): masked as its parent, %q", c.name, got)
		}
		// Built on the masked name, as a name taken is ("-2").
		if again := Mask(Suffixed(Mask(c.name), "/reads")); !strings.HasSuffix(again, "/reads") {
			t.Errorf("Mask(Suffixed(Mask(%q), %q)) = %q, lost its suffix", c.name, "/reads", again)
		}
	}
}
