package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// budgetMember starts a pool of fake connections on a shoaletcd budget
// named name, with inUse of its connections leased, and ends both when the
// test does.
func budgetMember(t *testing.T, addr, prefix, name, label string, inUse int) {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := shoaletcd.New(ctx, client, shoaletcd.Options{Name: name, Size: 6, Min: 1, Prefix: prefix, Label: label})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := shoal.New(shoal.Config[int]{
		Dial:     func(context.Context) (int, error) { return 1, nil },
		MaxConns: 4,
		Budget:   b,
	})
	if err != nil {
		t.Fatal(err)
	}
	var held []shoal.Lease[int]
	for range inUse {
		l, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	t.Cleanup(func() {
		for _, l := range held {
			l.Release()
		}
		p.Close(context.Background())
	})
}

func TestBudgetShowsEachMember(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	prefix := fmt.Sprintf("/shoal-cmd-test/%d/", time.Now().UnixNano())
	name := "orders-db"
	budgetMember(t, addr, prefix, name, "api-1", 3)
	budgetMember(t, addr, prefix, name, "api-2", 1)

	// The members publish their demand within a moment: poll.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := runShoal(t, "budget", name, "--etcd", addr, "--prefix", prefix)
		r.wantCode(t, exitOK)
		if strings.Contains(r.stdout, "budget orders-db: 6 connections") &&
			hasRow(r.stdout, "api-1", "3", "1") && hasRow(r.stdout, "api-2", "1", "1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the members never showed with their demand:\n%s", r.stdout)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// --watch prints again until interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), 350*time.Millisecond)
	defer cancel()
	var out, errOut strings.Builder
	code := run(ctx, []string{"budget", "--etcd", addr, "--prefix", prefix, "--watch", "--interval", "100ms", name}, &out, &errOut)
	if code != exitInterrupted || strings.Count(out.String(), "budget orders-db:") < 2 {
		t.Fatalf("--watch: status %d, printed:\n%s\n%s", code, out.String(), errOut.String())
	}
}

// hasRow reports whether a table row names member with this demand and
// minimum (the row's fields after the pid).
func hasRow(table, member, demand, minimum string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= 7 && f[0] == member && f[3] == demand && f[4] == minimum {
			return true
		}
	}
	return false
}

func TestBudgetBadInput(t *testing.T) {
	// A loopback port nobody listens on: etcd unreachable.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"budget"}, exitUsage, "the budget's NAME is required"},
		{[]string{"budget", "db"}, exitUsage, "--etcd is required"},
		{[]string{"budget", "db", "--etcd", dead, "--interval", "0s"}, exitUsage, "--interval must be > 0"},
		{[]string{"budget", "a", "b", "--etcd", dead}, exitUsage, "unexpected argument"},
		{[]string{"budget", "db", "--etcd", dead, "--timeout", "300ms"}, exitFailed, "etcd at " + dead},
	} {
		r := runShoal(t, tc.args...)
		r.wantCode(t, tc.code)
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: stderr lacks %q:\n%s", tc.args, tc.want, r.stderr)
		}
	}
	r := runShoal(t, "help", "budget")
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, "--watch") {
		t.Errorf("help budget:\n%s", r.stdout)
	}
}

func TestBudgetThatDoesNotExist(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	r := runShoal(t, "budget", "no-such-budget", "--etcd", addr, "--prefix", fmt.Sprintf("/shoal-cmd-test/%d/", time.Now().UnixNano()))
	r.wantCode(t, exitFailed)
	if !strings.Contains(r.stderr, `no budget "no-such-budget"`) {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
}
