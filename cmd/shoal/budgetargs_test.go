package main

import (
	"slices"
	"testing"
	"time"
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
