package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// helpLine returns the line of `shoal help cmd` that lists flag.
func helpLine(t *testing.T, cmd, flag string) string {
	t.Helper()
	r := runShoal(t, "help", cmd)
	r.wantCode(t, exitOK)
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), flag+" ") {
			return l
		}
	}
	t.Fatalf("help %s lists no %s:\n%s", cmd, flag, r.stdout)
	return ""
}

// TestChartHelpSaysTheNameEndsInItsFormat: --chart takes the whole file
// name, which must end in .svg or .png, and the help says so in the words
// of the error a name without them gets, rather than suggesting that
// shoal adds the extension to the name given.
func TestChartHelpSaysTheNameEndsInItsFormat(t *testing.T) {
	const rule = "must end in .svg or .png"
	for _, cmd := range []string{"bench", "sweep"} {
		line := helpLine(t, cmd, "--chart")
		if !strings.Contains(line, rule) || strings.Contains(line, "FILE.svg") {
			t.Errorf("help %s: the --chart line does not say the name %s: %q", cmd, rule, line)
		}
		_, err := parseFlags(cmd, []string{"--target", "postgres://u@h/db", "--chart", filepath.Join(t.TempDir(), "out")})
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s --chart out: %v, want an error that the name %s", cmd, err, rule)
		}
		if _, err := parseFlags(cmd, []string{"--target", "postgres://u@h/db", "--chart", filepath.Join(t.TempDir(), "out.svg")}); err != nil {
			t.Errorf("%s --chart out.svg: %v", cmd, err)
		}
	}
}

// TestTargetHelpNamesKeyValueStrings: bench and sweep take a PostgreSQL
// key=value connection string as --target, as they take a URL, and their
// help says so rather than asking for a URL alone.
func TestTargetHelpNamesKeyValueStrings(t *testing.T) {
	for _, cmd := range []string{"bench", "sweep"} {
		if line := helpLine(t, cmd, "--target"); !strings.Contains(line, "key=value") {
			t.Errorf("help %s: the --target line does not name a key=value string: %q", cmd, line)
		}
	}
	tg, err := parseTarget("host=127.0.0.1 port=5432 user=app dbname=app")
	if err != nil || tg.Kind != targetPostgres {
		t.Errorf("a key=value --target: %v, kind %v, want a PostgreSQL target", err, tg)
	}
}

// TestSweepWithoutTargetNamesKeyValueStrings: the error for a sweep
// without --target asks for what it takes, a key=value string too.
func TestSweepWithoutTargetNamesKeyValueStrings(t *testing.T) {
	r := runShoal(t, "sweep")
	r.wantCode(t, exitUsage)
	if first, _, _ := strings.Cut(r.stderr, "\n"); !strings.Contains(first, "--target is required") || !strings.Contains(first, "key=value") {
		t.Errorf("the error does not ask for a URL or a key=value string: %q", first)
	}
}
