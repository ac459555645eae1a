package connstr

import (
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// TestMaskWhereThePasswordIs: the examples, each masked at the
// password's place only.
func TestMaskWhereThePasswordIs(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		problem  bool
	}{
		{"postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres:xxxxx@127.0.0.1:5432/postgres?sslmode=disable", false},
		{"postgres://shoal:shoal@127.0.0.1:5432/shoal_test", "postgres://shoal:xxxxx@127.0.0.1:5432/shoal_test", false},
		{"postgres://nosuchuser:x@127.0.0.1:5432/db?application_name=exist", "postgres://nosuchuser:xxxxx@127.0.0.1:5432/db?application_name=exist", false},
		{"postgres://app:a@h/a?application_name=a@a.a", "postgres://app:xxxxx@h/a?application_name=a@a.a", false},
		{"postgres://app:correct-horse@battery-staple@db:54x2/app", "postgres://app:xxxxx@db:54x2/app", true},
		{"postgres://app:8080/Secret@127.0.0.1:1/app", "postgres://app:xxxxx@127.0.0.1:1/app", true},
		{"postgres://u:p@ss#w0rd@127.0.0.1/db", "postgres://u:xxxxx@127.0.0.1/db", true},
		{"postgres://u:se?cr3t@127.0.0.1/db", "postgres://u:xxxxx@127.0.0.1/db", true},
		{"clickhouse+http://127.0.0.1:1/?user=default&password=pa@Secret", "clickhouse+http://127.0.0.1:1/?user=default&password=xxxxx", false},
		{"https://127.0.0.1:8443/?token=t0k&x=1", "https://127.0.0.1:8443/?token=xxxxx&x=1", false},
		{"postgres://127.0.0.1/db", "postgres://127.0.0.1/db", false},
		{"host=127.0.0.1 user=a password=a dbname=a", "host=127.0.0.1 user=a password=xxxxx dbname=a", false},
		{`host=h password = 'a b\' c' dbname=d`, "host=h password = xxxxx dbname=d", false},
		{"host=h password=a b c", "host=h password=xxxxx", true},
		{"host=h dbname='x password=secret", "host=h dbname=xxxxx", true},
	} {
		r := Read(tc.in)
		if got := r.Mask(tc.in, "xxxxx"); got != tc.want {
			t.Errorf("Mask(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if (r.Problem != "") != tc.problem {
			t.Errorf("Read(%q).Problem = %q, want a problem: %v", tc.in, r.Problem, tc.problem)
		}
	}
}

// checkBuilt asserts that Mask hides exactly b's password bytes, and that a
// clean string is read without a problem.
func checkBuilt(t *testing.T, b connstrtest.Built) {
	t.Helper()
	if b.Password == "" {
		return
	}
	r := Read(b.S)
	if got, want := r.Mask(b.S, "xxxxx"), b.Masked("xxxxx"); got != want {
		t.Fatalf("Mask(%q)\n got %q\nwant %q (problem %q)", b.S, got, want, r.Problem)
	}
	if b.Clean && r.Problem != "" {
		t.Fatalf("Read(%q): problem %q in a well-formed string", b.S, r.Problem)
	}
	if strings.Contains(r.Problem, b.Password) && len(b.Password) > 3 {
		t.Fatalf("problem %q quotes the password", r.Problem)
	}
}

func TestMaskSeeds(t *testing.T) {
	for _, pw := range connstrtest.Seeds {
		for _, user := range []string{"app", pw, ""} {
			for _, raw := range []bool{false, true} {
				checkBuilt(t, connstrtest.URL(user, pw, pw+"_test", "me@example.com", raw, false))
				checkBuilt(t, connstrtest.URL(user, pw, pw, "", raw, true))
			}
			checkBuilt(t, connstrtest.KeywordValue(user, pw, pw, false))
			checkBuilt(t, connstrtest.KeywordValue(user, pw, pw, true))
		}
	}
}

// FuzzMask: whatever the user, password, database and application name,
// the masked string is the string with exactly the password's bytes
// replaced.
func FuzzMask(f *testing.F) {
	for _, pw := range connstrtest.Seeds {
		f.Add("app", pw, "app", "me@example.com", uint8(0))
		f.Add(pw, pw, pw, pw, uint8(1))
		f.Add("app", pw, pw+"_test", "", uint8(2))
		f.Add("app", pw, "db", "", uint8(3))
	}
	f.Fuzz(func(t *testing.T, user, pw, db, app string, form uint8) {
		switch form % 4 {
		case 0:
			checkBuilt(t, connstrtest.URL(user, pw, db, app, false, false))
		case 1:
			checkBuilt(t, connstrtest.URL(user, pw, db, app, true, false))
		case 2:
			checkBuilt(t, connstrtest.URL(user, pw, db, app, form&4 != 0, true))
		default:
			checkBuilt(t, connstrtest.KeywordValue(user, pw, db, form&4 != 0))
		}
	})
}
