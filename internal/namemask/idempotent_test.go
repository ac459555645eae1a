package namemask

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// nameCases are pool names and free text with passwords in the shapes the
// masker reads (URLs, keyword/value pairs, quoted values, punctuation
// around them), the names of the pool-name tests of other packages among
// them; with the package's test tables they seed FuzzMaskIdempotent.
var nameCases = []string{
	"orders", "cache 50% full", "orders v=1 x", "orders host=db (primary)",
	"postgres://app:hunter2@db/orders", "postgres://app:hunter2@db.internal/orders?sslmode=disable",
	"orders host=db password=hunter2", "orders,password=hunter2", "orders db:5432/app",
	"orders host=db password='hunter 2'", "orders host=db password = hunter2",
	"orders: host=db password='hunter 2' dbname=orders", "orders host=db url=postgres://app:hunter2@db",
	"orders;password=pw", "orders;Password = pw", "orders,host=db,password=pw",
	"orders v=1,sslpassword=pw dbname=orders", "orders;password='hunter 2' (primary)", "orders|token=abc def",
	"orders postgres://db/x?a=1&password=pw&b=2", "a=1 b=postgres://u:pw@db", "host=db app='a b' x=1",
	"orders,password=pw postgres://app:hunter2@db/x?sslmode=disable&password=pw&application_name=a",
	"orders password='hunter 2' replica", "orders password = hunter2 replica", "password='hunter 2' orders",
	// A quoted value with punctuation, or more text, right after it.
	"(password='pw')", "(password='p w')", "x (password='pw'), y", `"password='p w'"`,
	"password='pw')", "a password = 'pw'),", "orders;password='a b')", "token='a b'x=1",
	"password='a b'x", "host=db password='a b'(eu)", "orders password='p w'/reads", "token=''a b'",
	`password="p w"),`, `{"password":"pw"}`, `"password=pw"`, "password=pw)",
	// A URL with words after its first: its path or query goes on.
	"postgres://db/x?a=1 password=pw&b=2", "postgres://u:pw@db/x y?password=pw&p w",
	"postgres://db/x password='a&b c' tail", "postgres://db/x#f y&password=pw",
	"postgres://u:p@ss@db/x?password=pw (eu)", "postgres://u:pw@db/x@?password=pw ",
	"postgres://u:pw@db/xpostgres://u:pw@db/x?password=pw (",
	"password='a b'password=pw", "}token='a b'password=pw'", "pAss='pAss='0''' ''",
	"A:// pAss=& pAss=&", "pAss=' pAss=00' ''", "postgres://db/x?a=1 %70assword=p w&b=2 Pass%77ord=pw",
}

// seeds returns every input of the package's tests.
func seeds() []string {
	s := append([]string(nil), nameCases...)
	for _, c := range textCases {
		s = append(s, c.text)
	}
	for _, c := range escapedCases {
		s = append(s, c.name)
	}
	for _, c := range append(append(append(doubledQuoteCases, doubleQuotedCases...), jsonCases...), closedValueCases...) {
		s = append(s, c.name)
	}
	for _, c := range urlStartCases {
		s = append(s, c.name)
	}
	for _, c := range suffixedCases {
		s = append(s, c.name, Suffixed(c.name, "/reads"))
	}
	return s
}

// checkIdempotent fails t if masking s a second time, with Mask or with
// Text, changes what the first masking made of it: names are masked again
// wherever they are shown, and names are built from masked names, whose
// suffixes ("-2", "-3") must survive the masking and tell them apart.
func checkIdempotent(t *testing.T, s string) {
	t.Helper()
	once := Mask(s)
	if twice := Mask(once); twice != once {
		t.Errorf("Mask(%q) = %q, masked again %q", s, once, twice)
	}
	two, three := Mask(Suffixed(once, "-2")), Mask(Suffixed(once, "-3"))
	if !strings.HasSuffix(two, "-2") || !strings.HasSuffix(three, "-3") {
		t.Errorf("Suffixed(%q, ...) masked to %q and %q, a suffix lost", once, two, three)
	}
	if once, twice := Text(s, "MASK"), Text(Text(s, "MASK"), "MASK"); twice != once {
		t.Errorf("Text(%q) = %q, masked again %q", s, once, twice)
	}
}

// Masking what was masked changes nothing.
func TestMaskIdempotent(t *testing.T) {
	for _, s := range seeds() {
		checkIdempotent(t, s)
	}
}

// FuzzMaskIdempotent: masking what was masked changes nothing, whatever
// the text.
func FuzzMaskIdempotent(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		checkIdempotent(t, s)
	})
}

// A quoted value with text right after its closing quote is masked as a
// quoted word, so that, read again, the word ends where the value did and
// the text after it stays; a quoted value that ends the name or a word
// of it is masked bare, as before.
func TestMaskQuotedValueBeforeText(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"(password='pw')", "(password='xxxxx')"},
		{"orders (password='p w'), replica", "orders (password='xxxxx'), replica"},
		{"orders;password='a b')", "orders;password='xxxxx')"},
		{"orders password='p w'/reads", "orders password='xxxxx'/reads"},
		{"host=db password='a b'x=1", "host=db password='xxxxx'x=1"},
		{"orders password = 'pw'),", "orders password = 'xxxxx'),"},
		// Nothing right after the quote: bare, as before.
		{"orders password='p w' replica", "orders password=xxxxx replica"},
		{"orders host=db password='p w'", "orders host=db password=xxxxx"},
	} {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
		if got, want := Text(c.name, "MASK"), strings.ReplaceAll(c.want, "xxxxx", "MASK"); got != want {
			t.Errorf("Text(%q) = %q, want %q", c.name, got, want)
		}
	}
}

// FuzzMaskQuotedValue: a password quoted in a name, with text or
// punctuation around it, is masked and nothing else changes; masked
// again, the name stays as it is.
func FuzzMaskQuotedValue(f *testing.F) {
	for _, pw := range connstrtest.Seeds {
		for shape := range quotedShapes {
			f.Add(pw, uint8(shape))
		}
	}
	f.Fuzz(func(t *testing.T, pw string, shape uint8) {
		if !utf8.ValidString(pw) || strings.Contains(pw, "://") {
			return // a URL in a password is read as one, a word of its own
		}
		sh := quotedShapes[int(shape)%len(quotedShapes)]
		masked := "xxxxx"
		if sh.after != "" && !isWordSpace(sh.after[0]) {
			masked = "'xxxxx'"
		}
		name := sh.before + "password=" + quoteValue(pw) + sh.after
		want := sh.before + "password=" + masked + sh.after
		if got := Mask(name); got != want {
			t.Fatalf("Mask(%q)\n got %q\nwant %q", name, got, want)
		}
		if got := Mask(want); got != want {
			t.Fatalf("Mask(%q) = %q, masked again", want, got)
		}
	})
}

// quotedShapes are the text before and after a quoted password.
var quotedShapes = []struct{ before, after string }{
	{"(", ")"}, {"orders (", "), replica"}, {"orders;", ")"}, {"orders ", "/reads"},
	{"host=db ", "x=1"}, {"orders ", " replica"}, {"orders host=db ", ""}, {`"`, `"`},
}

// quoteValue writes v as a single-quoted keyword/value value.
func quoteValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// A name read whole as a URL has its words after the first in its path or
// query: a bare password value in the query is masked up to the next '&',
// where the URL ends it, and the parameters after it stay.
func TestMaskKeywordInALaterWordOfAURL(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"postgres://db/x?a=1 password=pw&b=2", "postgres://db/x?a=1 password=xxxxx&b=2"},
		{"postgres://u:pw@db/x y?password=pw&sslmode=disable", "postgres://u:xxxxx@db/x y?password=xxxxx&sslmode=disable"},
		// No '&': to the next space, as before.
		{"postgres://db/x?a=1 password=pw b", "postgres://db/x?a=1 password=xxxxx b"},
		// An '&' that ends no parameter stays in the password: one in a
		// quoted value, one escaped, one before the query starts.
		{"postgres://db/x?a=1 password='a&b c'", "postgres://db/x?a=1 password=xxxxx"},
		{"postgres://db/x password='a&b c' tail", "postgres://db/x password=xxxxx tail"},
		{`postgres://db/x?a=1 password=a\&b c`, "postgres://db/x?a=1 password=xxxxx c"},
		{"postgres://db/x password=p&w", "postgres://db/x password=xxxxx"},
		// An '&' in a password masked before starts no parameter: a
		// value after it is masked as it would be once that one is.
		{"postgres://db/x password=& token=&", "postgres://db/x password=xxxxx token=xxxxx"},
		{"postgres://db/x password=a&b token=c&d=1", "postgres://db/x password=xxxxx token=xxxxx"},
		// A %-escaped keyword, as the URL's own parameters may be.
		{"postgres://db/x?a=1 %70assword=pw&b=2", "postgres://db/x?a=1 %70assword=xxxxx&b=2"},
		{"postgres://db/x?a=1 b=2 Pass%77ord=pw c", "postgres://db/x?a=1 b=2 Pass%77ord=xxxxx c"},
		{"postgres://db/x?a=1 50%password=pw", "postgres://db/x?a=1 50%password=xxxxx"},
		// Not in a URL: keyword/value keywords are read as written.
		{"orders %70assword=pw", "orders %70assword=pw"},
	} {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// A name that starts with a URL in doubt (an '@' after its host) is read
// whole as one, as a URL not in doubt is: the words after it are part of
// its last parameter, masked with a password there.
func TestMaskURLInDoubtWithWords(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"postgres://u:pw@db/x?password=pw (eu)", "postgres://u:xxxxx@db/x?password=xxxxx"},
		{"postgres://u:p@ss@db/x?password=pw (eu)", "postgres://u:xxxxx@db/x?password=xxxxx"},
		{"postgres://u:pw@db/x@y?token=pw replica", "postgres://u:xxxxx@y?token=xxxxx"},
		{"postgres://u:p@ss@db/x replica", "postgres://u:xxxxx@db/x replica"},
	} {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// A password keyword right after a quoted value's closing quote starts a
// pair of its own, as pgx reads it ("password='a b'token=pw"): its value
// is masked too.
func TestMaskPairRightAfterAQuotedValue(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"orders (password='a b'token=pw) x", "orders (password='xxxxx'token=xxxxx x"},
		{"orders,password='a b'password=pw", "orders,password='xxxxx'password=xxxxx"},
	} {
		if got := Mask(c.name); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.name, got, c.want)
		}
		if got, want := Text(c.name, "MASK"), strings.ReplaceAll(c.want, "xxxxx", "MASK"); got != want {
			t.Errorf("Text(%q) = %q, want %q", c.name, got, want)
		}
	}
}
