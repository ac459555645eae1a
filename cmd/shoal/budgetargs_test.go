package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// TestBudgetNameBetweenFlags: the budget's name may stand anywhere among
// the flags, not only first or last, as the usage line reads.
func TestBudgetNameBetweenFlags(t *testing.T) {
	for _, args := range [][]string{
		{"orders", "--timeout", "2s", "--etcd", "127.0.0.1:2379"},
		{"--timeout", "2s", "--etcd", "127.0.0.1:2379", "orders"},
		{"--timeout", "2s", "orders", "--etcd", "127.0.0.1:2379"},
	} {
		o, err := parseBudgetFlags(args)
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if o.name != "orders" || !slices.Equal(o.etcd, []string{"127.0.0.1:2379"}) || o.timeout != 2*time.Second {
			t.Errorf("%q: name %q, etcd %q, timeout %s", args, o.name, o.etcd, o.timeout)
		}
	}
	if _, err := parseBudgetFlags([]string{"--timeout", "2s", "orders", "--etcd", "127.0.0.1:2379", "payments"}); err == nil {
		t.Errorf("two names: no error")
	}
}

// TestBudgetFlagErrorsSayWhatToWrite: budget's flag errors are as clear as
// bench's: a bad value says what the flag takes, an unknown flag comes
// with the valid ones, and an --etcd that names no endpoint is a usage
// error rather than a failure to reach etcd.
func TestBudgetFlagErrorsSayWhatToWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"budget", "db", "--etcd", "127.0.0.1:1", "--interval", "5"}, "--interval 5: a duration needs a unit, such as 5s or 5ms"},
		{[]string{"budget", "db", "--etcd", "127.0.0.1:1", "--timeout", "soon"}, `--timeout "soon": want a duration such as 500ms or 2s`},
		{[]string{"budget", "db", "--etcd", "127.0.0.1:1", "--watch=often"}, `--watch "often": want true or false`},
		{[]string{"budget", "db", "--etcd", "127.0.0.1:1", "--bogus"}, "valid flags: --etcd, --interval, --prefix, --timeout, --watch"},
		{[]string{"budget", "db", "--etcd", " , "}, "--etcd names no endpoint"},
	} {
		r := runShoal(t, tc.args...)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if !strings.Contains(first, tc.want) || strings.Contains(first, "parse error") {
			t.Errorf("%q: want %q, got:\n%s", tc.args, tc.want, first)
		}
	}
}

// TestBudgetNotFoundNamesThePrefixRead: with --prefix "" shoaletcd reads
// under its default prefix, and the error for a budget not found names
// that prefix, the one looked under, not "".
func TestBudgetNotFoundNamesThePrefixRead(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	r := runShoal(t, "budget", "no-such-budget-h3", "--etcd", addr, "--prefix", "")
	r.wantCode(t, exitFailed)
	if want := `under "/shoal/budget/"`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %s:\n%s", want, r.stderr)
	}
}
