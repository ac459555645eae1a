package namemask

import "testing"

// closedValueCases are names and text with a password keyword right after
// an opening quote, its value closed by the quote, and what Mask masks
// them to.
var closedValueCases = []struct{ name, want string }{
	{`SELECT 1 AS "password=abc", 2`, `SELECT 1 AS "password=xxxxx", 2`},
	{`SELECT 'token=abc';`, `SELECT 'token=xxxxx';`},
	{`orders ("password=pw")`, `orders ("password=xxxxx")`},
	// In text that is itself a JSON string, or quoted as Go quotes it.
	{`{"title": "1 worker, SELECT 1 AS \"password=abc\", 3 rounds"}`, `{"title": "1 worker, SELECT 1 AS \"password=xxxxx\", 3 rounds"}`},
	{`--query "SELECT 1 AS \"password=abc\""`, `--query "SELECT 1 AS \"password=xxxxx\""`},
	// A quote in the password stays in the mask: the last quote that
	// closes the string ends it, and an escaped one closes nothing.
	{`"password=ab"", x`, `"password=xxxxx", x`},
	{`"password=ab\"", x`, `"password=xxxxx", x`},
	// Text after the quote in its word, or no quote before the keyword:
	// where the value ends cannot be told, and it is masked whole.
	{`"password=abc"x, y`, `"password=xxxxx y`},
	{`(password=abc), y`, `(password=xxxxx y`},
	// A space in the value: up to the quote that closes the string, in
	// any of its quote styles, unless a pair follows pgx's value.
	{`"password=a b"`, `"password=xxxxx"`},
	{`SELECT 1 AS "password=a b", 2`, `SELECT 1 AS "password=xxxxx", 2`},
	{`SELECT 'password=a b c';`, `SELECT 'password=xxxxx';`},
	{`{"q": "SELECT \"password=a b\""}`, `{"q": "SELECT \"password=xxxxx\""}`},
	{`x "token=a b", "password=c\" d"`, `x "token=xxxxx", "password=xxxxx"`},
	{`"password=a"b c", x`, `"password=xxxxx", x`},
	{`"password=a b"c d")`, `"password=xxxxx")`},
	{`"password=a dbname=x"`, `"password=xxxxx dbname=x"`},
	// A quoted value with words after it in the string: they go too.
	{`'pass="a b' x`, `'pass=xxxxx' x`},
	{`"pass='a b' c", x`, `"pass=xxxxx", x`},
	{`"pass="a b" c", x`, `"pass=xxxxx", x`},
	{`'pass='' c'`, `'pass=xxxxx'`},
	// A quote that closes a value before the keyword opens no string.
	{`a=''pass=b c'`, `a=''pass=xxxxx c'`},
	{`a='b'pass=c d'`, `a='b'pass=xxxxx d'`},
	{`a= ' 'pass=b c'`, `a= ' 'pass=xxxxx c'`},
	{`a='\' 'pass=b c'`, `a='\' 'pass=xxxxx c'`},
	// No quote closes it on its line: as pgx reads it.
	{"\"password=a b\nc\"", "\"password=xxxxx b\nc\""},
}

// A bare password whose keyword follows an opening quote (a query's
// quoted identifier, a JSON string) is masked up to the quote that
// closes it, and the quote and the punctuation after it stay: only the
// password is masked, in Mask and in Text.
func TestMaskValueClosedByItsQuote(t *testing.T) {
	checkMasked(t, closedValueCases)
}
