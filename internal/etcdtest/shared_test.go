package etcdtest

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// tb records what SharedAddr tells the test instead of ending it, so that
// the skip and the failure can be seen from outside.
type tb struct {
	testing.TB
	skipped, failed string
}

func (t *tb) Helper()                           {}
func (t *tb) Skipf(format string, args ...any)  { t.skipped = fmt.Sprintf(format, args...) }
func (t *tb) Fatalf(format string, args ...any) { t.failed = fmt.Sprintf(format, args...) }

func TestSharedAddr(t *testing.T) {
	// A port just closed has nothing listening on it.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := closed.Addr().String()
	_ = closed.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answering := ln.Addr().String()

	for _, c := range []struct {
		name, addr, require string
		skip, fail          string // what the skip or the failure says; neither: the address comes back
	}{
		{name: "answering", addr: answering},
		{name: "answering, required", addr: answering, require: "1"},
		{name: "unset", skip: "SHOAL_TEST_ETCD is not set"},
		{name: "unset, required", require: "1", fail: "SHOAL_TEST_ETCD is not set"},
		{name: "silent", addr: silent, skip: "does not answer"},
		{name: "silent, required", addr: silent, require: "1", fail: "does not answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvShared, c.addr)
			t.Setenv(envRequire, c.require)
			rec := &tb{TB: t}
			got := SharedAddr(rec)
			want := ""
			if c.skip == "" && c.fail == "" {
				want = c.addr
			}
			if got != want || !says(rec.skipped, c.skip) || !says(rec.failed, c.fail) {
				t.Fatalf("returned %q, skipped %q, failed %q; want %q, a skip saying %q, a failure saying %q", got, rec.skipped, rec.failed, want, c.skip, c.fail)
			}
		})
	}
}

// says reports whether msg holds want, or both are empty.
func says(msg, want string) bool {
	if want == "" {
		return msg == ""
	}
	return strings.Contains(msg, want)
}
