package main

import (
	"strings"
	"testing"
)

// TestFlagErrorsNameTheFlagAsTyped: an unknown flag, or one left without
// its value, is named with the two dashes the help and the user write,
// not the flag package's one ("-nope"); an unknown one with the valid
// flags after it.
func TestFlagErrorsNameTheFlagAsTyped(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--nope"}, "unknown flag --nope; valid flags: --chart,"},
		{[]string{"sweep", "-nope=1"}, "unknown flag --nope; valid flags: --allow-writes,"},
		{[]string{"bench", "--target"}, "--target needs a value"},
		{[]string{"budget", "db", "--etcd"}, "--etcd needs a value"},
	} {
		r := runShoal(t, tc.args...)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if !strings.Contains(first, tc.want) {
			t.Errorf("%q: want %q, got:\n%s", tc.args, tc.want, first)
		}
	}
}
