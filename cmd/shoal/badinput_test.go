package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUnknownFlagListsValidOnes(t *testing.T) {
	r := runShoal(t, "bench", "--frobnicate")
	r.wantCode(t, exitUsage)
	for _, want := range []string{"frobnicate", "--target", "--only", "--duration", "--quick", "--json", "--chart"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestUnknownScenarioListsValidOnes(t *testing.T) {
	r := runShoal(t, "bench", "--only", "churn,warp")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, `"warp"`) || !strings.Contains(r.stderr, "churn, partitions, multiplex, transport") {
		t.Errorf("stderr does not name the bad scenario and the valid ones:\n%s", r.stderr)
	}
}

// TestEmptyOnly: --only "" (a variable that was not set) is refused, as
// an empty --target is, rather than running every scenario (here against
// a closed port, so that a run that starts ends at once).
func TestEmptyOnly(t *testing.T) {
	r := runShoal(t, "bench", "--only", "", "--target", "http://"+closedPort(t))
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--only") || !strings.Contains(r.stderr, "churn, partitions, multiplex, transport") {
		t.Errorf("stderr does not name --only and the valid scenarios:\n%s", r.stderr)
	}
}

func TestUnknownCommand(t *testing.T) {
	r := runShoal(t, "benchmark")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "bench, sweep") {
		t.Errorf("stderr does not list the commands:\n%s", r.stderr)
	}
}

func TestBadFlagValues(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--json", "--csv"},
		{"bench", "--chart", "out.gif"},
		{"bench", "--chart", "/nonexistent-dir/out.png"},
		{"bench", "--duration", "0s"},
		{"bench", "--workers", "-1"},
		{"bench", "--rounds", "0"},
		{"bench", "--rounds", "101"},
		{"bench", "--dial-timeout", "0s"},
		{"bench", "extra"},
		{"sweep"},
	} {
		r := runShoal(t, args...)
		if r.code != exitUsage || r.stderr == "" {
			t.Errorf("%q: status %d, stderr %q; want %d and a message", args, r.code, r.stderr, exitUsage)
		}
	}
}

// TestMalformedTarget checks that each error names the wrong part.
func TestMalformedTarget(t *testing.T) {
	for _, tc := range []struct{ target, part string }{
		{"ftp://host/x", "scheme"},
		{"localhost:5432", "scheme"},
		{"postgres:///db", "host"},
		{"postgres://u:hunter2pw@db.example:99999/db", "port"},
		{"postgres://u:hunter2pw@db.example:port/db", "port"},
		{"https://u:hunter2pw@[::1/x", "url"},
	} {
		for _, cmd := range []string{"bench", "sweep"} {
			r := runShoal(t, cmd, "--target", tc.target)
			if r.code != exitUsage {
				t.Errorf("%s --target %s: status %d, want %d\n%s", cmd, tc.target, r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.part) {
				t.Errorf("%s --target %s: error does not name the %s:\n%s", cmd, tc.target, tc.part, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "hunter2pw") {
				t.Errorf("%s --target %s: the password was printed:\n%s%s", cmd, tc.target, r.stdout, r.stderr)
			}
		}
	}
}

// closedPort returns a loopback address nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachableTargetKeepsPassword runs every command, output format and
// chart against an unreachable target with a password in its URL, and
// checks that it fails quickly with the address and the cause, and that
// the password appears nowhere: not on stdout, stderr, nor in any file.
func TestUnreachableTargetKeepsPassword(t *testing.T) {
	const secret = "Sup3r-S3cret-pw"
	addr := closedPort(t)
	dir := t.TempDir()
	targets := []string{
		"postgres://shoal:" + secret + "@" + addr + "/db?sslmode=disable",
		"postgres://shoal@" + addr + "/db?password=" + secret,
		"clickhouse+http://default:" + secret + "@" + addr,
		"influxdb+http://admin:" + secret + "@" + addr,
		"https://user:" + secret + "@" + addr + "/health",
		"grpc://user:" + secret + "@" + addr,
	}
	for i, target := range targets {
		for _, cmd := range []string{"bench", "sweep"} {
			chart := filepath.Join(dir, cmd+string(rune('a'+i))+".svg")
			args := []string{cmd, "--target", target, "--dial-timeout", "2s", "--json", "--chart", chart}
			var r result
			took := elapsed(func() { r = runShoal(t, args...) })
			if cmd == "sweep" && !strings.HasPrefix(target, "postgres") {
				r.wantCode(t, exitUsage) // sweep needs PostgreSQL
			} else if r.code != exitFailed {
				t.Errorf("%s --target <%d>: status %d, want %d\n%s", cmd, i, r.code, exitFailed, r.stderr)
			}
			if took > 2*time.Second+time.Second {
				t.Errorf("%s --target <%d>: took %v, more than the dial timeout", cmd, i, took)
			}
			if r.code == exitFailed && !strings.Contains(r.stderr, "not available yet") {
				if !strings.Contains(r.stderr, addr) || !strings.Contains(r.stderr, "refused") {
					t.Errorf("%s --target <%d>: error lacks the address %s or the cause:\n%s", cmd, i, addr, r.stderr)
				}
			}
			if strings.Contains(r.stdout+r.stderr, secret) {
				t.Errorf("%s --target <%d>: password printed:\nstdout: %s\nstderr: %s", cmd, i, r.stdout, r.stderr)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if strings.Contains(string(b), secret) {
			t.Errorf("file %s holds the password", e.Name())
		}
	}
}

// TestRedaction checks the redaction helpers on their own.
func TestRedaction(t *testing.T) {
	tg, err := parseTarget("postgres://me:p%40ss%2Fw0rd@127.0.0.1:5432/db?sslmode=disable&sslpassword=k3y")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://me:REDACTED@127.0.0.1:5432/db?sslmode=disable&sslpassword=REDACTED"; tg.Redacted != want {
		t.Errorf("Redacted = %s, want %s", tg.Redacted, want)
	}
	if got := redactRaw(`unexpected argument "postgres://u:pa@ss@h:1/db?password=x"`); strings.Contains(got, "pa@ss") || strings.Contains(got, "password=x") {
		t.Errorf("redactRaw left a secret: %s", got)
	}
}

// TestPasswordWithUnescapedSlashNeverShows: a generated password often
// holds '/', '?' or '#', unescaped; it ends the URL's host early, and every
// path that quotes the target (a bad --target, a misplaced argument, a
// flag's value) must still hide it.
func TestPasswordWithUnescapedSlashNeverShows(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:se/cr3tpw@127.0.0.1:5432/db",
		"postgres://u:se?cr3tpw@127.0.0.1:5432/db",
		"postgres://u:4242#cr3tpw@127.0.0.1:5432/db",
	} {
		_, err := parseTarget(raw)
		if err == nil {
			t.Errorf("parseTarget accepted a target whose host the password ended early")
			continue
		}
		for _, s := range []string{err.Error(), redactRaw(`unexpected argument "` + raw + `"`)} {
			if strings.Contains(s, "cr3t") || strings.Contains(s, "4242") {
				t.Errorf("password shown: %s", s)
			}
		}
	}
}

// TestEmptyTargetIsAnError: --target "" (an unset variable, say) is a
// usage error, not a run against the embedded servers.
func TestEmptyTargetIsAnError(t *testing.T) {
	r := runShoal(t, "bench", "--target=")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "--target is empty") {
		t.Errorf("stderr does not say the target is empty:\n%s", r.stderr)
	}
}

// TestNothingMeasuredIsAFailure: a run in which every scenario was skipped
// for the target exits 1 and says so, instead of 0 ("everything ran").
func TestNothingMeasuredIsAFailure(t *testing.T) {
	// Plain http, which multiplex does not fit (it needs https or grpc),
	// answering 200 so that the probe passes.
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r := runShoal(t, "bench", "--quick", "--target", srv.URL+"/", "--only", "multiplex")
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "nothing was measured") {
		t.Errorf("stderr does not say nothing was measured:\n%s", r.stderr)
	}
}

// TestSilentPostgresFailsOnce: a server that accepts connections and never
// answers fails the probe's login, once, naming the dial timeout, instead of
// every case waiting out a timeout of its own.
func TestSilentPostgresFailsOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // accepted, never answered
		}
	}()
	defer func() {
		ln.Close()
		<-done
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	}()
	r := runShoal(t, "bench", "--quick", "--dial-timeout", "300ms", "--target", "postgres://u:s3cretpw@"+ln.Addr().String()+"/db")
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, "cannot use") || !strings.Contains(r.stderr, "no answer within --dial-timeout 300ms") {
		t.Errorf("stderr does not say the server never answered:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "s3cretpw") {
		t.Errorf("the password shows:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "FAILED") {
		t.Errorf("cases ran against a server that never answered:\n%s", r.stdout)
	}
}

// TestBadFlagValueSaysWhatToWrite: a flag given a value of the wrong kind
// is named as the user wrote it (--workers, not -workers), with what it
// takes, rather than "parse error" and a list of the valid flags that it
// is already one of.
func TestBadFlagValueSaysWhatToWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--workers", "abc"}, `--workers "abc": want a whole number`},
		{[]string{"sweep", "--max-conns=1.5"}, `--max-conns "1.5": want a whole number`},
		{[]string{"bench", "--quick=maybe"}, `--quick "maybe": want true or false`},
		{[]string{"bench", "--duration", "fast"}, `--duration "fast": want a duration such as 500ms or 2s`},
		{[]string{"bench", "--duration", "5"}, `--duration 5: a duration needs a unit, such as 5s or 5ms`},
		{[]string{"sweep", "--warmup=-1.5"}, `--warmup -1.5: a duration is not negative and needs a unit, such as 1.5s or 1.5ms`},
		// The hint is for the value the parsing stopped at, not for a
		// later one.
		{[]string{"bench", "--workers", "abc", "--duration", "5"}, `--workers "abc": want a whole number`},
	} {
		r := runShoal(t, tc.args...)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if !strings.Contains(first, tc.want) || strings.Contains(first, "valid flags") || strings.Contains(first, "parse error") {
			t.Errorf("%q: want %q, without the list of flags or \"parse error\", got:\n%s", tc.args, tc.want, first)
		}
	}
}

// TestUnknownFlagBeforeABareDuration: an unknown flag is named, with the
// valid ones, even when a duration without a unit follows it.
func TestUnknownFlagBeforeABareDuration(t *testing.T) {
	r := runShoal(t, "bench", "--nope", "--duration", "5")
	r.wantCode(t, exitUsage)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if !strings.Contains(first, "-nope") || !strings.Contains(first, "valid flags: ") {
		t.Errorf("want the unknown flag and the valid ones, got:\n%s", first)
	}
}

// TestSweepOfOneConnection: --max-conns 1 leaves the sweep one
// configuration, the default, and nothing to compare it with: a usage
// error, not a run that ends in "keep the default".
func TestSweepOfOneConnection(t *testing.T) {
	r := runShoal(t, "sweep", "--target", "postgres://u@127.0.0.1:1/db", "--max-conns", "1")
	r.wantCode(t, exitUsage)
	if first, _, _ := strings.Cut(r.stderr, "\n"); !strings.Contains(first, "--max-conns 1") || !strings.Contains(first, "nothing to compare") {
		t.Errorf("want an error saying one connection leaves nothing to compare, got:\n%s", first)
	}
}
