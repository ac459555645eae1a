package main

import (
	"os"
	"strings"
	"testing"
)

// TestPostgresTargetRequiringTLSOfAServerWithout: sslmode=require against
// PgBouncer, which runs here without TLS, fails saying that the server
// does not offer TLS and which sslmode to try, naming the target masked,
// with pgx's "server refused TLS connection" gone and no password. The
// same host twice (two attempts, both refused) says the same.
func TestPostgresTargetRequiringTLSOfAServerWithout(t *testing.T) {
	dsn := os.Getenv("SHOAL_TEST_PGBOUNCER")
	if dsn == "" {
		skipOrFail(t, "SHOAL_TEST_PGBOUNCER is not set (. scripts/test-env.sh)")
	}
	if !strings.Contains(dsn, "sslmode=disable") || !strings.Contains(dsn, ":shoal-secret@127.0.0.1:6432/") {
		t.Fatalf("SHOAL_TEST_PGBOUNCER is not the one scripts/test-env.sh sets: the test rewrites its sslmode and host")
	}
	single := strings.Replace(dsn, "sslmode=disable", "sslmode=require", 1)
	twice := strings.Replace(single, "@127.0.0.1:6432/", "@127.0.0.1:6432,127.0.0.1:6432/", 1)
	for _, target := range []string{single, twice} {
		for _, cmd := range []string{"bench", "sweep"} {
			r := runShoal(t, cmd, "--quick", "--dial-timeout", "5s", "--target", target)
			r.wantCode(t, exitFailed)
			masked := strings.Replace(target, "shoal-secret", redactedWord, 1)
			for _, want := range []string{"the server does not offer TLS", "sslmode=prefer", "sslmode=disable", "--target " + masked} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("%s %s: stderr lacks %q:\n%s", cmd, masked, want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "refused TLS connection") || strings.Contains(r.stdout+r.stderr, "shoal-secret") {
				t.Errorf("%s %s: pgx's own words, or the password:\n%s", cmd, masked, r.stderr)
			}
		}
	}
}

// TestPostgresTargetPreferringTLSOfAServerWithout: sslmode=prefer, pgx's
// default, takes the plain connection PgBouncer offers, so the refusal
// is no error there and the probe passes; a wrong password after it keeps
// the server's own words, not the advice about TLS.
func TestPostgresTargetPreferringTLSOfAServerWithout(t *testing.T) {
	dsn := os.Getenv("SHOAL_TEST_PGBOUNCER")
	if dsn == "" {
		skipOrFail(t, "SHOAL_TEST_PGBOUNCER is not set (. scripts/test-env.sh)")
	}
	target := strings.Replace(strings.Replace(dsn, "sslmode=disable", "sslmode=prefer", 1), ":shoal-secret@", ":not-the-password@", 1)
	r := runShoal(t, "sweep", "--quick", "--dial-timeout", "5s", "--target", target)
	r.wantCode(t, exitFailed)
	if strings.Contains(r.stderr, "does not offer TLS") || !strings.Contains(r.stderr, "authentication failed") {
		t.Errorf("want the server's password error alone:\n%s", r.stderr)
	}
}
