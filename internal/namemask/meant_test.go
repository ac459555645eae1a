package namemask

import (
	"strings"
	"testing"
)

// doubledQuoteCases are names with a password quoted as SQL quotes it, a
// quote in it written as two, which pgx does not read, and what Mask
// masks them to.
var doubledQuoteCases = []struct{ name, want string }{
	{"password='it''s secret'", "password=xxxxx"},
	{"orders password='it''s secret' replica", "orders password=xxxxx replica"},
	{"host=db password='it''s secret' dbname=x", "host=db password=xxxxx dbname=x"},
	{"orders (password='it''s a'), replica", "orders (password='xxxxx'), replica"},
	{"orders,password='a''b=c'", "orders,password=xxxxx"},
	{"orders password='''s' x", "orders password=xxxxx x"},
	// Never closed so read: to the end, as a quote that never closes.
	{"orders password='it''s", "orders password=xxxxx"},
	// pgx's reading and the writer's agree: masked as before.
	{"orders password='pw' replica", "orders password=xxxxx replica"},
	{"orders token=''-2", "orders token='xxxxx'-2"},
	// No password: left as written.
	{"orders 'it''s' c", "orders 'it''s' c"},
}

// A single-quoted password with two quotes in a row in it is masked up
// to the quote that closes it read as SQL reads it, where pgx's reading
// would end it at the first of the two and show the rest; Text masks it
// the same way.
func TestMaskDoubledQuote(t *testing.T) {
	checkMasked(t, doubledQuoteCases)
}

// doubleQuotedCases are names with a password in double quotes, which pgx
// does not read as quotes, and what Mask masks them to.
var doubleQuotedCases = []struct{ name, want string }{
	{`password="dq secret"`, "password=xxxxx"},
	{`orders password="dq secret" replica`, "orders password=xxxxx replica"},
	{`host=db password="dq secret" dbname=x`, "host=db password=xxxxx dbname=x"},
	{`orders (password="p w"), replica`, "orders (password='xxxxx'), replica"},
	{`postgres://db/x?a=1 password="p&w x"&b=2`, "postgres://db/x?a=1 password='xxxxx'&b=2"},
	{`orders password="a "b c" d`, "orders password=xxxxx d"},
	// pgx's reading and the writer's agree: masked as before.
	{`orders password="pw" replica`, "orders password=xxxxx replica"},
	// A pair right after pgx's value: the string reads on as pgx reads
	// it, with pgx's password, and its pairs stay.
	{`host=db password="abc dbname=x application_name="app"`, `host=db password=xxxxx dbname=x application_name="app"`},
	{`orders password="a b=c" x`, `orders password=xxxxx b=c" x`},
	// A quote with a letter or a single quote after it: the value runs
	// on to the next white space, as a shell reads it.
	{`orders password="p w"x`, `orders password=xxxxx`},
	{`orders password="p w"x (eu)`, `orders password=xxxxx (eu)`},
	{`pass=" "'`, `pass=xxxxx`},
	// Quoted parts right after it, joined into one word as a shell joins
	// them: to white space, or to punctuation right after a part.
	{`pass="a b"'c d'`, `pass=xxxxx`},
	{`orders pass="a b"'c d' replica`, `orders pass=xxxxx replica`},
	{`orders pass="a b"x'c d'"e f" y`, `orders pass=xxxxx y`},
	{`orders pass="a b"'c\'d e' y`, `orders pass=xxxxx y`},
	{`orders (pass="a b"'c d'), y`, `orders (pass='xxxxx'), y`},
	{`orders pass="a b"'c d'/reads`, `orders pass='xxxxx'/reads`},
	{`'pass="a b ''`, `'pass=xxxxx'`},
	{`orders pass="a b"\'c d`, `orders pass=xxxxx d`},
	// A part that never closes: to the end, as a quoted value that
	// never closes.
	{`orders pass="a b"'c d y`, `orders pass=xxxxx`},
	// No quote after the first: a bare value, as pgx reads it.
	{`orders password="p w replica`, "orders password=xxxxx w replica"},
	// No password: left as written.
	{`orders "a b" c`, `orders "a b" c`},
}

// A password in double quotes with a space in it is masked up to the
// quote that closes it, or, with text right after that quote, on to the
// next white space, where pgx's reading, a bare value, would end it at
// the space and show the rest; Text masks it the same way.
func TestMaskDoubleQuoted(t *testing.T) {
	checkMasked(t, doubleQuotedCases)
}

// checkMasked fails t for each case that Mask, or Text with "MASK", does
// not mask to want.
func checkMasked(t *testing.T, cases []struct{ name, want string }) {
	t.Helper()
	for _, c := range cases {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
		if got, want := Text(c.name, "MASK"), strings.ReplaceAll(c.want, "xxxxx", "MASK"); got != want {
			t.Errorf("Text(%q) = %q, want %q", c.name, got, want)
		}
	}
}
