package namemask

import "testing"

// escapedCases are names with a backslash-escaped space and what Mask
// masks them to.
var escapedCases = []struct{ name, want string }{
	{`orders password=a\ b c`, `orders password=xxxxx c`},
	{`orders host=db password=a\ b\ c`, `orders host=db password=xxxxx`},
	{`C:\ dir name`, `C:\ dir name`},
}

// A keyword/value password may hold a space escaped with a backslash: it
// is masked whole, not up to the space, and text with an escaped space
// and no password is left as it is.
func TestEscapedSpaceInAPassword(t *testing.T) {
	for _, c := range escapedCases {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got, want := Text(`refused: password=a\ b c`, "MASK"), `refused: password=MASK c`; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}
