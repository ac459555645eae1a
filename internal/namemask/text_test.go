package namemask

import (
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// textCases are free text and what Text masks it to with "MASK"; they seed
// FuzzMaskIdempotent too.
var textCases = []struct{ text, want string }{
	{"cannot reach postgres://u:pw@db/x?sslmode=disable: refused",
		"cannot reach postgres://u:MASK@db/x?sslmode=disable: refused"},
	{"from --target postgres://u@db/x?password=pw&sslmode=disable): refused",
		"from --target postgres://u@db/x?password=MASK&sslmode=disable): refused"},
	{`{"target": "https://h/?x=1&sslpassword=pw&y=2", "n": 1}`,
		`{"target": "https://h/?x=1&sslpassword=MASK&y=2", "n": 1}`},
	{`{"target": "host=db password=MASK", "url": "postgres://u:MASK@db/x?password=MASK"}`,
		`{"target": "host=db password=MASK", "url": "postgres://u:MASK@db/x?password=MASK"}`},
	{`unexpected argument "password=pw" (flags go first)`, `unexpected argument "password=MASK" (flags go first)`},
	{"bad host=db password='p w' dbname=x, again", "bad host=db password=MASK dbname=x, again"},
	{"a password = pw b,sslpassword='it\\'s' c", "a password = MASK b,sslpassword=MASK c"},
	{"a postgres://u:pw@db/x\r\nb token=pw\r\n", "a postgres://u:MASK@db/x\r\nb token=MASK\r\n"},
	// Nothing to mask: left as written.
	{"role \"x\" does not exist (SQLSTATE 28000)", "role \"x\" does not exist (SQLSTATE 28000)"},
	{"mypassword=1 passwords x", "mypassword=1 passwords x"},
}

// Text masks with the word it is given each password quoted in free text,
// where it stands, and nothing else: not the words after a URL, not the
// quote that closes a string masked before, not a line's "\r".
func TestText(t *testing.T) {
	for _, c := range textCases {
		if got := Text(c.text, "MASK"); got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.text, got, c.want)
		}
	}
}

// FuzzText: a connection string quoted in free text, beside a copy masked
// before, comes out with exactly its password's bytes masked and the text
// around it, the copy's closing quote included, unchanged.
func FuzzText(f *testing.F) {
	for _, pw := range connstrtest.Seeds {
		f.Add("app", pw, "app", uint8(0))
		f.Add(pw, pw, pw, uint8(1))
		f.Add("app", pw, pw, uint8(2))
		f.Add("app", pw, pw, uint8(3))
	}
	// A bare password that starts with a double quote, the pairs after
	// it read as pgx reads them.
	f.Add("app", `"`, "app", uint8(3))
	f.Fuzz(func(t *testing.T, user, pw, db string, form uint8) {
		if pw == "" {
			return
		}
		var b connstrtest.Built
		switch form % 4 {
		case 0:
			b = connstrtest.URL(user, pw, db, "", false, false)
		case 1:
			b = connstrtest.URL(user, pw, db, "", true, false)
		case 2:
			b = connstrtest.URL(user, pw, db, "", false, true)
		default:
			b = connstrtest.KeywordValue(user, pw, db, false)
			if strings.Count(b.S, "=") != 4 {
				return // a value holding '=' makes words of no keyword/value text
			}
		}
		if form%4 < 3 && strings.ContainsAny(b.S, wordSpaces) {
			return // a URL in free text ends at white space
		}
		text := "cannot use " + b.S + ` (from "` + b.Masked("MASK") + `"), again`
		want := "cannot use " + b.Masked("MASK") + ` (from "` + b.Masked("MASK") + `"), again`
		if got := Text(text, "MASK"); got != want {
			t.Fatalf("Text\n got %q\nwant %q", got, want)
		}
	})
}
