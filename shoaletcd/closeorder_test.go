package shoaletcd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
)

// TestCloseWithPoolsOpen guards Budget.Close called before its pools':
// it must say so in its error and set the pools' share to 0, since the
// connections left open are no longer counted in etcd and another member
// may open as many beyond the size.
func TestCloseWithPoolsOpen(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const size = 4
	da, db := &countingDial{}, &countingDial{}
	a := newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, Min: 3, IdleTime: -1})
	pa, err := shoal.New(shoal.Config[int]{Name: "a", MaxConns: size, MinConns: 3, Dial: da.dial, Close: da.close, Budget: a})
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close(context.Background())
	eventually(t, 5*time.Second, "a's pool filled to its MinConns", func() (bool, string) {
		return da.open.Load() == 3, debugState(a)
	})
	stopA := holdLeases(pa, 1) // one leased, two idle
	defer stopA()

	b := newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: -1})
	pb, err := shoal.New(shoal.Config[int]{Name: "b", MaxConns: size, Dial: db.dial, Close: db.close, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close(context.Background())
	stopB := holdLeases(pb, size)
	defer stopB()

	err = a.Close()
	if err == nil || !strings.Contains(err.Error(), "3 connection(s)") {
		t.Fatalf("Budget.Close with its pool's 3 connections open returned %v; want an error saying they are no longer counted", err)
	}
	t.Log(err)
	// a's pool closes its idle connections at once; only the leased one
	// stays beyond the size, until it is released.
	eventually(t, 3*time.Second, "a's pool closed its idle connections", func() (bool, string) {
		return da.open.Load() == 1 && pa.Stats().Share == 0, pa.Stats().String()
	})
	stopA()
	eventually(t, 3*time.Second, "a's pool closed its last connection", func() (bool, string) {
		return da.open.Load() == 0, pa.Stats().String()
	})
}
