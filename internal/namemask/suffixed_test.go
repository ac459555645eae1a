package namemask

import "testing"

// suffixedCases are names and what their read pool's name shows.
var suffixedCases = []struct{ name, want string }{
	{"orders", "orders/reads"},
	{"db1:5432/app", "db1:5432/app/reads"},
	{"orders password=pw", "orders password=xxxxx /reads"},
	{"host=db password=pw", "host=db password=xxxxx /reads"},
	{"orders password='p w'", "orders password='xxxxx'/reads"},
	{"postgres://u:pw@db/app", "postgres://u:xxxxx@db/app/reads"},
	{"orders password=pw/reads", "orders password=xxxxx /reads"},
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
	}
}
