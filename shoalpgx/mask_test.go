package shoalpgx

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// TestPasswordEqualToOtherFieldsIsMaskedOnlyWhereItIs: a password that is
// one letter, a common word, or the user's or database's name leaves those
// fields alone in String and in a parse error.
func TestPasswordEqualToOtherFieldsIsMaskedOnlyWhereItIs(t *testing.T) {
	for _, tc := range []struct{ cs, want string }{
		{"postgres://shoal:shoal@127.0.0.1:5432/shoal_test", "host=127.0.0.1 port=5432 database=shoal_test user=shoal password=xxxxx"},
		{"postgres://postgres:postgres@127.0.0.1:5432/postgres", "host=127.0.0.1 port=5432 database=postgres user=postgres password=xxxxx"},
		{"postgres://a:a@127.0.0.1:5432/a", "host=127.0.0.1 port=5432 database=a user=a password=xxxxx"},
		{"host=127.0.0.1 user=x password=x dbname=x", "host=127.0.0.1 port=5432 database=x user=x password=xxxxx"},
	} {
		cfg, err := ParseConfig(tc.cs)
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", tc.cs, err)
		}
		if s := cfg.String(); !strings.Contains(s, tc.want) {
			t.Errorf("String() = %s\nwant it to contain %s", s, tc.want)
		}
	}
	_, err := ParseConfig("postgres://shoal:shoal@127.0.0.1:notaport/shoal_test")
	want := "shoalpgx: cannot parse connection string postgres://shoal:xxxxx@127.0.0.1:notaport/shoal_test: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
}

// TestAmbiguousPasswordIsRefusedAndHiddenWhole: the strings, whose
// unescaped '@', '/' or '#' would let pgx read a piece of the password as
// the host or the database, are refused, with the whole password masked.
func TestAmbiguousPasswordIsRefusedAndHiddenWhole(t *testing.T) {
	for _, tc := range []struct{ cs, masked string }{
		{"postgres://app:correct-horse@battery-staple@db:54x2/app", "postgres://app:xxxxx@db:54x2/app"},
		{"postgres://app:8080/Secret@127.0.0.1:1/app", "postgres://app:xxxxx@127.0.0.1:1/app"},
		{"postgres://u:p@ss#w0rd@127.0.0.1:5432/db", "postgres://u:xxxxx@127.0.0.1:5432/db"},
	} {
		_, err := ParseConfig(tc.cs)
		if err == nil {
			t.Errorf("ParseConfig accepted %s", tc.masked)
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("error %T, want a *ConfigError", err)
		}
		want := "shoalpgx: cannot parse connection string " + tc.masked + ": "
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q\nwant it to start %q", err, want)
		}
		for _, piece := range []string{"horse", "battery", "Secret", "8080", "ss#", "w0rd"} {
			if strings.Contains(err.Error(), piece) {
				t.Errorf("error shows %q: %v", piece, err)
			}
		}
	}
}

// checkParse asserts ParseConfig's behaviour for a built string: a clean
// one parses to the exact password, user and database and prints them
// (but the password) as they are; any other is refused with exactly the
// password's bytes masked.
func checkParse(t *testing.T, b connstrtest.Built, user, db string) {
	t.Helper()
	if b.Password == "" || strings.ContainsRune(b.S, 0) {
		return
	}
	cfg, err := ParseConfig(b.S)
	if err != nil {
		want := "shoalpgx: cannot parse connection string " + b.Masked(redacted) + ": "
		if b.Clean {
			if strings.ContainsAny(user+db+b.Password, "\x00") {
				return
			}
			t.Fatalf("ParseConfig refused a well-formed string: %v", err)
		}
		if !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("error %q\nwant it to start %q", err, want)
		}
		return
	}
	if !b.Clean {
		t.Fatalf("ParseConfig accepted an ambiguous string; String() = %s", cfg)
	}
	cc := cfg.ConnConfig
	if cc.Password != b.Password {
		t.Fatalf("password %q, want %q", cc.Password, b.Password)
	}
	if user != "" && cc.User != user || cc.Database != db {
		t.Fatalf("user %q database %q, want %q %q", cc.User, cc.Database, user, db)
	}
	want := fmt.Sprintf("host=127.0.0.1 port=5432 database=%s user=%s password=xxxxx", cc.Database, cc.User)
	if s := cfg.String(); !strings.Contains(s, want) {
		t.Fatalf("String() = %s\nwant it to contain %s", s, want)
	}
}

// FuzzParseConfigMasks: whatever the password, user and database,
// ParseConfig reads a well-formed string exactly and prints its fields
// unmasked, and refuses any other with the password masked where it is.
func FuzzParseConfigMasks(f *testing.F) {
	for _, pw := range connstrtest.Seeds {
		f.Add("app", pw, "app", uint8(0))
		f.Add(pw, pw, pw, uint8(1))
		f.Add("app", pw, pw+"_test", uint8(2))
		f.Add(pw, pw, pw, uint8(3))
	}
	f.Fuzz(func(t *testing.T, user, pw, db string, form uint8) {
		if !validText(user) || !validText(pw) || !validText(db) {
			return // pgx refuses these for reasons of its own
		}
		switch form % 4 {
		case 0:
			checkParse(t, connstrtest.URL(user, pw, db, "", false, false), user, db)
		case 1:
			checkParse(t, connstrtest.URL(user, pw, db, "", true, false), user, db)
		case 2:
			checkParse(t, connstrtest.URL(user, pw, db, "", false, true), user, db)
		default:
			if strings.TrimSpace(user) != user || strings.TrimSpace(db) != db {
				return
			}
			checkParse(t, connstrtest.KeywordValue(user, pw, db, form&4 != 0), user, db)
		}
	})
}

// validText reports whether s is text pgx takes as a value: valid UTF-8
// without NUL, and no leading or trailing space (pgx trims the decoded
// host, port and database).
func validText(s string) bool {
	u, err := url.PathUnescape(url.PathEscape(s))
	return err == nil && u == s && !strings.ContainsRune(s, 0) && strings.TrimSpace(s) == s && strings.ToValidUTF8(s, "") == s
}

func TestParseConfigMaskSeeds(t *testing.T) {
	for _, pw := range connstrtest.Seeds {
		for _, user := range []string{"app", pw} {
			if !validText(pw) {
				continue
			}
			checkParse(t, connstrtest.URL(user, pw, pw+"_test", "", false, false), user, pw+"_test")
			checkParse(t, connstrtest.URL(user, pw, pw, "", true, false), user, pw)
			checkParse(t, connstrtest.URL(user, pw, "db", "", false, true), user, "db")
			checkParse(t, connstrtest.KeywordValue(user, pw, pw, true), user, pw)
		}
	}
}
