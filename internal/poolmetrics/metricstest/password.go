package metricstest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// testPasswordInName: a password in a name given to Pool is masked where
// it stands, as the core masks a pool's Config.Name, and the rest of the
// name is kept: in the series, in Name, and in the error for a name in
// use. Metrics named by pools whose name ends in a bare password value
// still tell the second pool from the first.
func testPasswordInName(t *testing.T, b Backend) {
	const secret = "hunter2"
	set := b.New(t)
	m := register(t, set, "postgres://app:"+secret+"@db:5432/orders")
	m.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 2} })
	m.ObserveAcquire(time.Millisecond)
	m.AttachHosts(func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db:5432", Open: 1, Role: "primary"}} })
	if strings.Contains(m.Name(), secret) || !strings.Contains(m.Name(), "@db:5432/orders") {
		t.Errorf("Name() = %q, want the name with its password masked and the rest kept", m.Name())
	}
	for key := range set.Read(t) {
		if strings.Contains(key, secret) {
			t.Errorf("reported: %s", key)
		}
	}
	if _, err := set.Pool("postgres://app:" + secret + "@db:5432/orders"); !errors.Is(err, b.ErrDuplicatePool) || strings.Contains(err.Error(), secret) {
		t.Errorf("a name in use: %v, want ErrDuplicatePool without the password", err)
	}
	// The same name with another password is the same name once masked.
	_, err := set.Pool("postgres://app:other-" + secret + "@db:5432/orders")
	if !errors.Is(err, b.ErrDuplicatePool) || strings.Contains(err.Error(), secret) {
		t.Errorf("a masked name in use: %v, want ErrDuplicatePool without the password", err)
	}

	newPool := func(obs shoal.Observer) {
		p, err := shoal.New(shoal.Config[*FakeConn]{Name: "orders password=" + secret, MaxConns: 1, Dial: FakeDial(), Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
	}
	first, err := set.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	twin, err := set.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	newPool(first)
	newPool(twin)
	if strings.Contains(first.Name()+twin.Name(), secret) || first.Name() == twin.Name() || !strings.HasPrefix(twin.Name(), first.Name()) {
		t.Errorf("two pools of one name ending in a password are named %q and %q, want two names, the second the first's with a suffix, no password", first.Name(), twin.Name())
	}
}
