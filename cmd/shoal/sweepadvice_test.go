package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestVerdictSweepAdviceQuotesTheTarget: the sweep the verdict suggests
// asks for the password back only when the target had one, and quotes the
// target for a POSIX shell whatever it holds, a ' included, on a line of
// its own that wrapping cannot break.
func TestVerdictSweepAdviceQuotesTheTarget(t *testing.T) {
	for _, c := range []struct {
		target, quoted string
		password       bool
	}{
		{"postgres://app@db.example:5432/app", `'postgres://app@db.example:5432/app'`, false},
		{"postgres://app:s3cret@db.example:5432/app?application_name=o'brien", `'postgres://app:REDACTED@db.example:5432/app?application_name=o'\''brien'`, true},
		{`host=db.example user=app dbname='o\'brien'`, `'host=db.example user=app dbname='\''o\'\''brien'\'''`, false},
		{`host=db.example user=app password=s3cret dbname='o\'brien'`, `'host=db.example user=app password=REDACTED dbname='\''o\'\''brien'\'''`, true},
	} {
		tg, err := parseTarget(c.target)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		writeVerdict(&buf, &options{rounds: 3}, roundsReport(), tg)
		out := buf.String()
		if !strings.Contains(out, "shoal sweep --target "+c.quoted+"\n") {
			t.Errorf("%s: the sweep's command is not shoal sweep --target %s, ending a line:\n%s", c.target, c.quoted, out)
		}
		if got := strings.Contains(strings.Join(strings.Fields(out), " "), "put your password back in"); got != c.password {
			t.Errorf("%s: asks for the password back: %v, want %v:\n%s", c.target, got, c.password, out)
		}
	}
}

// TestRecommendationAsksForThePasswordOnlyWhenMasked: the sweep's
// connection string to paste asks for the password back only when one was
// masked in it.
func TestRecommendationAsksForThePasswordOnlyWhenMasked(t *testing.T) {
	for conn, want := range map[string]bool{
		"postgres://app@db.example/app?pool_max_conns=8&pool_partitions=2":              false,
		"postgres://app:REDACTED@db.example/app?pool_max_conns=8&pool_partitions=2":     true,
		"host=db.example user=app password=REDACTED pool_max_conns=8 pool_partitions=2": true,
	} {
		rec := &benchrun.Recommendation{Name: "2x4", Best: "2x4", Pool: &benchrun.PoolConfig{MaxConns: 8, Partitions: 2, ConnsPerPartition: 4}, ConnString: conn}
		var buf bytes.Buffer
		writeRecommendation(&buf, rec)
		if got := strings.Contains(buf.String(), "put your password back in"); got != want {
			t.Errorf("%s: asks for the password back: %v, want %v:\n%s", conn, got, want, buf.String())
		}
	}
}
