package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

func TestSetMaxConnsShrinksAtTheServer(t *testing.T) {
	ctx := pgtest.Ctx(t)
	p := newTestPool(t, func(c *Config) { c.MaxConns = 4 })
	var conns []*Conn
	for range 4 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if err := p.SetMaxConns(2); err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		c.Release()
	}
	admin := pgtest.AdminConn(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", pgtest.AppName(t)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends at the server after shrinking to 2", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := p.Stat(); s.MaxConns() != 2 || s.TotalConns() != 2 {
		t.Fatalf("Stat after the shrink: max %d total %d", s.MaxConns(), s.TotalConns())
	}
	if err := p.SetMaxConns(0); err == nil {
		t.Fatal("SetMaxConns(0) accepted")
	}
}
