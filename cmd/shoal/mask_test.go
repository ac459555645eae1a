package main

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// TestMaskedWhereItStandsOnly: the examples. A password that is a
// letter or a common word masks nothing but itself, in the target, in the
// connection string the sweep suggests and in text written through
// scrubWriter.
func TestMaskedWhereItStandsOnly(t *testing.T) {
	for _, tc := range []struct{ raw, redacted, settings string }{
		{"postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable",
			"postgres://postgres:REDACTED@127.0.0.1:5432/postgres?sslmode=disable",
			"postgres://postgres:REDACTED@127.0.0.1:5432/postgres?sslmode=disable&pool_max_conns=8&pool_partitions=2"},
		{"postgres://nosuchuser:x@127.0.0.1:5432/shoal_test", "postgres://nosuchuser:REDACTED@127.0.0.1:5432/shoal_test",
			"postgres://nosuchuser:REDACTED@127.0.0.1:5432/shoal_test?pool_max_conns=8&pool_partitions=2"},
		{"clickhouse+http://127.0.0.1:1/?user=default&password=pa@Secret", "clickhouse+http://127.0.0.1:1/?user=default&password=REDACTED", ""},
		{"host=127.0.0.1 user=a password=a dbname=a", "host=127.0.0.1 user=a password=REDACTED dbname=a",
			"host=127.0.0.1 user=a password=REDACTED dbname=a pool_max_conns=8 pool_partitions=2"},
	} {
		tg, err := parseTarget(tc.raw)
		if err != nil {
			t.Errorf("parseTarget(%s): %v", tc.redacted, err)
			continue
		}
		if tg.Redacted != tc.redacted {
			t.Errorf("Redacted = %s, want %s", tg.Redacted, tc.redacted)
		}
		if tc.settings != "" {
			if got, _ := pgPoolSettings(tg.Raw, 8, 2); got != tc.settings {
				t.Errorf("settings = %s\nwant %s", got, tc.settings)
			}
		}
		var b bytes.Buffer
		text := `shoal sweep: cannot use 127.0.0.1:5432: role "nosuchuser" does not exist (SQLSTATE 28000) ` + tc.raw + "\n"
		fmt.Fprint(scrubWriter{&b, tg}, text)
		if want := strings.ReplaceAll(text, tc.raw, tc.redacted); b.String() != want {
			t.Errorf("scrubWriter wrote\n%s\nwant\n%s", b.String(), want)
		}
	}
}

// TestAmbiguousTargetIsRefusedWhole: a password with an unescaped '@' or
// '#' would have the command dial a piece of it; it is refused, and no
// piece shows.
func TestAmbiguousTargetIsRefusedWhole(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:p@ss#w0rd@127.0.0.1:5432/db",
		"postgres://app:correct-horse@battery-staple@db:54x2/app",
		"postgres://app:8080/Secret@127.0.0.1:1/app",
	} {
		r := runShoal(t, "sweep", "--target", raw)
		r.wantCode(t, exitUsage)
		for _, piece := range []string{"ss#", "w0rd", "horse", "battery", "Secret", "8080"} {
			if strings.Contains(r.stderr+r.stdout, piece) {
				t.Errorf("%q shows: %s", piece, r.stderr)
			}
		}
		if !strings.Contains(r.stderr, ":REDACTED@") {
			t.Errorf("the refusal does not show the masked target: %s", r.stderr)
		}
	}
}

// TestServerErrorKeepsItsWords: with the password "x", PostgreSQL's
// "role ... does not exist" reaches the user whole (exact-match masking
// printed "does not eREDACTEDist").
func TestServerErrorKeepsItsWords(t *testing.T) {
	dsn := os.Getenv("SHOAL_TEST_POSTGRES")
	if dsn == "" {
		skipOrFail(t, "SHOAL_TEST_POSTGRES is not set")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("nosuchuser", "x")
	r := runShoal(t, "sweep", "--target", u.String(), "--dial-timeout", "3s")
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, `role "nosuchuser" does not exist`) || !strings.Contains(r.stderr, "nosuchuser:REDACTED@") {
		t.Errorf("stderr does not hold the server's words and the masked target:\n%s", r.stderr)
	}
}

// FuzzRedactRaw: a connection string quoted in free text comes out with
// exactly its password's bytes masked, and the text around it unchanged.
func FuzzRedactRaw(f *testing.F) {
	for _, pw := range connstrtest.Seeds {
		f.Add("app", pw, "app", uint8(0))
		f.Add(pw, pw, pw, uint8(1))
		f.Add("app", pw, pw, uint8(2))
	}
	f.Fuzz(func(t *testing.T, user, pw, db string, form uint8) {
		if pw == "" {
			return
		}
		var b connstrtest.Built
		switch form % 3 {
		case 0:
			b = connstrtest.URL(user, pw, db, "", false, false)
		case 1:
			b = connstrtest.URL(user, pw, db, "", true, false)
		default:
			b = connstrtest.URL(user, pw, db, "", false, true)
		}
		if strings.ContainsAny(b.S, " \t\n\r\v\f\u0085\u00a0") {
			return // a URL in free text ends at white space
		}
		text := "unexpected argument " + b.S + " (flags go first)"
		want := "unexpected argument " + b.Masked(redactedWord) + " (flags go first)"
		if got := redactRaw(text); got != want {
			t.Fatalf("redactRaw\n got %q\nwant %q", got, want)
		}
	})
}
