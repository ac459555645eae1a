package shoaletcd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// New does not fail when etcd does not answer, even when ctx's deadline
// comes before the budget's own bound on a request: the member starts on
// its Min and joins when etcd answers. A ctx canceled is the caller giving
// up, and New returns its error.
func TestNewWithADeadlineAndEtcdUnreachable(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	px := startProxy(t, addr)
	opts := Options{Name: "db", Size: 10, Min: 2, Prefix: prefix, Logger: testLogger(t)}

	// Shorter than half the default TTL, the budget's bound on a request.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	b, err := New(ctx, clientTo(t, px.ln.Addr().String()), opts)
	if err != nil {
		t.Fatalf("New with a 500ms deadline and etcd unreachable: %v; want the member started on its Min", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	f := newFakePool(t, b, 5)
	eventually(t, 2*time.Second, "running on Min 2", func() (bool, string) {
		return f.holding() == 2, fmt.Sprintf("holds %d, status %+v", f.holding(), b.Status())
	})
	px.forward.Store(true)
	eventually(t, 10*time.Second, "joined once etcd answers, and grown", func() (bool, string) {
		st := b.Status()
		return st.Joined && f.holding() == 5, fmt.Sprintf("holds %d, status %+v", f.holding(), st)
	})

	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if b, err := New(cctx, clientTo(t, startProxy(t, addr).ln.Addr().String()), opts); !errors.Is(err, context.Canceled) {
		if b != nil {
			_ = b.Close()
		}
		t.Errorf("New with ctx canceled: %v; want context.Canceled", err)
	}
}
