package namemask

import "testing"

// urlStartCases are names with a URL after other bytes of its word and
// what Mask masks them to.
var urlStartCases = []struct{ name, want string }{
	{"orders -postgres://u:pw@db/x?password=pw", "orders -postgres://u:xxxxx@db/x?password=xxxxx"},
	{"orders 1postgres://u:pw@db/x?sslmode=disable", "orders 1postgres://u:xxxxx@db/x?sslmode=disable"},
	{"orders .postgres://u:pw@db/x?password=pw&a=1", "orders .postgres://u:xxxxx@db/x?password=xxxxx&a=1"},
	{"orders ://db/x?password=pw", "orders ://db/x?password=xxxxx"},
	{"-postgres://u:pw@db/x?a=1", "-postgres://u:xxxxx@db/x?a=1"},
	// No password: left as written.
	{"orders -postgres://u@db/x?a=1", "orders -postgres://u@db/x?a=1"},
	{"orders 1://x", "orders 1://x"},
	// No scheme, no URL: pgx reads none, and user:password@host cannot
	// be told from a name such as "orders:7@eu" or its read pool's.
	{"orders:7@eu", "orders:7@eu"},
	{"orders:7@eu/reads", "orders:7@eu/reads"},
	{"app:pw@db/orders", "app:pw@db/orders"},
}

// A URL whose scheme follows a '-', '+', '.' or digit in its word ("a
// -postgres://...", "1postgres://...") is read from the scheme's first
// letter on, as the URL it is; "://" with no scheme before it is no URL,
// and a password keyword after it is masked as anywhere else. A word
// without "://" is no URL either, whatever ':' and '@' it holds.
func TestMaskURLAfterSchemeBytes(t *testing.T) {
	for _, c := range urlStartCases {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
