package shoaletcd

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// A member whose last pool left and to which a pool comes back publishes
// its demand again; until it has (etcd stopped here), its Status reports
// the demand its record holds, none, and never a negative one.
func TestStatusDemandOfAPoolBackWhileEtcdIsAway(t *testing.T) {
	addr, proc := startEtcd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := New(ctx, clientTo(t, addr), Options{Name: "db", Size: 10, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	f := newFakePool(t, b, 3)
	eventually(t, 3*time.Second, "in, demand 3", func() (bool, string) {
		st := b.Status()
		return f.holding() == 3 && st.Demand == 3, fmt.Sprintf("holds %d, status %+v", f.holding(), st)
	})
	f.stop() // the last pool leaves, and the member with it
	eventually(t, 3*time.Second, "out", func() (bool, string) {
		st := b.Status()
		return st.Members == 0 && st.Demand == 0, fmt.Sprintf("status %+v", st)
	})

	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Signal(syscall.SIGCONT) }()
	newFakePool(t, b, 3)
	if st := b.Status(); st.Demand < 0 {
		t.Errorf("a pool back with etcd stopped: status %+v, a negative demand", st)
	}
	if err := proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "its demand published again", func() (bool, string) {
		st := b.Status()
		return st.Demand == 3 && st.Members == 1, fmt.Sprintf("status %+v", st)
	})
}
