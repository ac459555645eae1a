package shoaletcd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// An etcd that answers, refusing this member's requests (its user has no
// role on the budget's keys, or it gives no user to an etcd with auth
// on), is the operator's to fix, as a wrong Size is: New returns the
// refusal rather than start the member on Min, uncounted in etcd, for as
// long as it runs, behind a warning that etcd does not answer.
func TestNewRefusedByEtcd(t *testing.T) {
	addr, _ := startEtcd(t)
	root := clientTo(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := root.RoleAdd(ctx, "root"); return err },
		func() error { _, err := root.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := root.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := root.RoleAdd(ctx, "app"); return err }, // no permission on any key
		func() error { _, err := root.UserAdd(ctx, "app", "app-pw"); return err },
		func() error { _, err := root.UserGrantRole(ctx, "app", "app"); return err },
		func() error { _, err := root.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("setting up auth: %v", err)
		}
	}
	for _, c := range []struct {
		user string
		want error
	}{
		{"app", rpctypes.ErrPermissionDenied},
		{"", rpctypes.ErrUserEmpty},
	} {
		cfg := clientv3.Config{Endpoints: []string{addr}, DialTimeout: 2 * time.Second, Logger: zap.NewNop()}
		if c.user != "" {
			cfg.Username, cfg.Password = c.user, c.user+"-pw"
		}
		client, err := clientv3.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		b, err := New(ctx, client, Options{Name: "db", Size: 4, Min: 1, Logger: testLogger(t)})
		if b != nil {
			_ = b.Close()
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), `budget "db"`) {
			t.Errorf("New as user %q refused by etcd: %v; want an error naming the budget, errors.Is %v", c.user, err, c.want)
		}
	}
}
