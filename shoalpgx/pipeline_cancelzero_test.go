package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// With CancelTimeout 0, a statement whose caller gave up, alone on its
// shared connection, is cancelled at the server at once, as a whole
// connection's is closed at once: the server stops it, whether the
// connection was closed for not having answered by the time the cancel
// request went or kept for having answered, and the pool's statements go
// on, the connection's place under MaxConns freed if it closed.
func TestPipelineCancelTimeoutZeroCancelsAbandoned(t *testing.T) {
	app := pgtest.AppName(t)
	p := newPipelinedPool(t, 2, 8, func(c *Config) {
		c.CancelTimeout = 0
		c.ConnConfig.RuntimeParams["application_name"] = app
	})
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)
	var pid uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	short, giveUp := context.WithCancel(ctx)
	abandoned := make(chan error, 1)
	go func() {
		_, err := p.Exec(short, "select pg_sleep(30)")
		abandoned <- err
	}()
	pgtest.WaitFor(t, 5*time.Second, "the sleep at the server", func() bool { return conn.pace.atServer.Load() == 1 })
	giveUp()
	if err := <-abandoned; !errors.Is(err, context.Canceled) {
		t.Fatalf("a statement given up on: %v", err)
	}
	admin := pgtest.AdminConn(t)
	pgtest.WaitFor(t, 10*time.Second, "the abandoned pg_sleep stopped at the server", func() bool {
		var running bool
		err := admin.QueryRow(ctx, "select count(*) > 0 from pg_stat_activity where pid = $1 and query like '%pg_sleep(30)%' and state = 'active'", pid).Scan(&running)
		return err == nil && !running
	})
	var again uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&again); err != nil {
		t.Fatalf("a statement after the cancel: %v", err)
	}
	if cs := p.pipe.conns(); len(cs) != 1 {
		t.Fatalf("%d shared connections open after the cancel, want 1 (MaxConns of the shared pool)", len(cs))
	}
}
