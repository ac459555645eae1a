package shoalpgx

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// goroutineID is the running goroutine's number, read from its stack's
// first line ("goroutine 7 [running]:").
func goroutineID(t *testing.T) int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf, _ = bytes.CutPrefix(buf, []byte("goroutine "))
	n, err := strconv.Atoi(string(buf[:bytes.IndexByte(buf, ' ')]))
	if err != nil {
		t.Fatalf("no goroutine number in %q", buf)
	}
	return n
}

// Two of docs/from-pgxpool.md's smaller differences: AfterRelease runs on
// the goroutine that releases (pgxpool starts one for it), and the
// connections AcquireAllIdle hands out count as acquires in Stat (pgxpool's
// do not).
func TestPgxpoolDifferencesAfterReleaseAndAcquireAllIdle(t *testing.T) {
	ran := make(chan int, 8)
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.MinConns = 2, 2
		c.AfterRelease = func(*pgx.Conn) bool { ran <- goroutineID(t); return true }
	})
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 10*time.Second, "MinConns open", func() bool { return p.Stat().IdleConns() == 2 })

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	select {
	case id := <-ran:
		if me := goroutineID(t); id != me {
			t.Errorf("AfterRelease ran on goroutine %d, the releaser is %d", id, me)
		}
	default:
		t.Error("AfterRelease had not run when Release returned")
	}

	before := p.Stat().AcquireCount()
	all := p.AcquireAllIdle(ctx)
	if len(all) != 2 {
		t.Fatalf("AcquireAllIdle returned %d connections, want the 2 idle", len(all))
	}
	for _, c := range all {
		c.Release()
	}
	if got := p.Stat().AcquireCount() - before; got != 2 {
		t.Errorf("AcquireAllIdle's 2 connections added %d to AcquireCount, want 2", got)
	}
}
