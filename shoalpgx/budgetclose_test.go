package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// checkedBudget is a LocalBudget whose permits, as each is given back,
// count the test's connections at the server: the backend of a permit's
// connection must be gone before the permit is, so at that moment the
// server holds at most the permits out less the one coming back. The count
// and the release are one step under mu, and the permits out are read
// after the count, so that a dial that takes a permit meanwhile only
// loosens the bound.
type checkedBudget struct {
	*shoal.LocalBudget
	t     testing.TB
	ctx   context.Context
	admin *pgx.Conn
	name  string // the application_name counted

	mu       sync.Mutex
	out      atomic.Int32
	releases int
	over     []string // what each release that found a backend too many saw
}

func newCheckedBudget(t *testing.T, size int) *checkedBudget {
	b, err := shoal.NewBudget(size, shoal.BudgetName("checked"))
	if err != nil {
		t.Fatal(err)
	}
	return &checkedBudget{LocalBudget: b, t: t, ctx: pgtest.Ctx(t), admin: pgtest.AdminConn(t), name: pgtest.AppName(t)}
}

func (b *checkedBudget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	p, err := b.LocalBudget.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	b.out.Add(1)
	return &checkedPermit{BudgetPermit: p, b: b}, nil
}

type checkedPermit struct {
	shoal.BudgetPermit
	b    *checkedBudget
	once sync.Once
}

func (p *checkedPermit) Release() {
	p.once.Do(func() {
		b := p.b
		b.mu.Lock()
		defer b.mu.Unlock()
		var n int
		err := b.admin.QueryRow(b.ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", b.name).Scan(&n)
		out := int(b.out.Load())
		if err != nil {
			b.t.Errorf("counting the backends as a permit came back: %v", err)
		} else if n > out-1 {
			b.over = append(b.over, fmt.Sprintf("%d backends, %d permits out with the one coming back", n, out))
		}
		b.releases++
		b.out.Add(-1)
		p.BudgetPermit.Release()
	})
}

// check fails the test for every release that found the connection's
// backend still at the server, and when fewer than least permits came back
// (the test did not exercise what it checks).
func (b *checkedBudget) check(t *testing.T, least int) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range b.over[:min(len(b.over), 10)] {
		t.Errorf("a permit came back before its connection's backend had gone: %s", o)
	}
	if b.releases < least {
		t.Errorf("%d permits came back, want %d or more", b.releases, least)
	}
}

// Two pools share a budget of 3 (shoal.NewBudget); their connections live
// 30-45ms, so each pool closes connections while callers of both wait for
// the permits those free. A whole connection gives its permit back only
// once the server has ended its backend (closeAndWait): each permit, as it
// comes back, finds at the server at most the permits still out, and the
// server, counted every 5ms (internal/pgcount), never holds more than 3.
func TestBudgetPermitComesBackAfterTheBackend(t *testing.T) {
	const size = 3
	ctx := pgtest.Ctx(t)
	b := newCheckedBudget(t, size)
	var pools []*Pool
	for range 2 {
		pools = append(pools, newTestPool(t, func(c *Config) {
			c.Budget = b
			c.MaxConns = size
			c.MaxConnLifetime = 30 * time.Millisecond
			c.MaxConnLifetimeJitter = 15 * time.Millisecond
		}))
	}
	server, err := pgcount.Start(ctx, pgcount.Config{ConnString: pgtest.ConnString(t), Arg: pgtest.AppName(t), Limit: size, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, p := range pools {
		for range 4 {
			wg.Go(func() {
				for range 60 {
					c, err := p.Acquire(ctx)
					if err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
					if _, err := c.Exec(ctx, "SELECT pg_sleep(0.002)"); err != nil {
						t.Errorf("Exec: %v", err)
					}
					c.Release()
				}
			})
		}
	}
	wg.Wait()
	for _, p := range pools {
		p.Close()
	}
	r := server.Stop()
	t.Logf("%d samples, at most %d connections at the server under a budget of %d", len(r.Samples), r.Max, size)
	for _, s := range r.Over[:min(len(r.Over), 10)] {
		t.Errorf("%d connections at the server at %s, over the budget of %d", s.Count, s.At.Format("15:04:05.000"), size)
	}
	if r.Max == 0 {
		t.Error("no connection counted at the server: the count looked at the wrong name")
	}
	b.check(t, 2*size+1) // more than the closes at Close: connections ended while callers ran
}

// A dial whose connection the pool refuses after connecting (AfterConnect
// fails here) gives its permit back when the dial returns, so the
// connection's close must wait for the server to end its backend too.
func TestBudgetRefusedDialWaitsForTheBackend(t *testing.T) {
	ctx := pgtest.Ctx(t)
	b := newCheckedBudget(t, 2)
	var refused atomic.Int32
	errRefused := errors.New("refused by the test")
	p := newTestPool(t, func(c *Config) {
		c.Budget = b
		c.MaxConns = 2
		c.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
			if refused.Add(1) <= 16 {
				return errRefused
			}
			return nil
		}
	})
	for refused.Load() <= 16 {
		c, err := p.Acquire(ctx)
		if err == nil {
			c.Release()
			continue
		}
		if !errors.Is(err, errRefused) {
			t.Fatalf("Acquire: %v", err)
		}
	}
	p.Close()
	b.check(t, 16)
}

// A caller who closes the *pgx.Conn under an acquired Conn, then releases
// it, hands the pool a connection pgx has closed already: pgx hung up
// right after its Terminate, so the wait for the server's hang-up is in
// that Close (the gate under the socket), and the permit comes back after
// the backend has gone as it does for the pool's own closes.
func TestBudgetCallersCloseWaitsForTheBackend(t *testing.T) {
	t.Run("plain", func(t *testing.T) { callersCloseWaits(t, nil) })
	t.Run("TLS", func(t *testing.T) {
		// The gate sees pgx's Terminate above TLS, and waits below it.
		callersCloseWaits(t, func(c *Config) {
			c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
			c.ConnConfig.Fallbacks = nil
		})
	})
}

func callersCloseWaits(t *testing.T, mutate func(*Config)) {
	ctx := pgtest.Ctx(t)
	b := newCheckedBudget(t, 2)
	p := newTestPool(t, func(c *Config) {
		c.Budget = b
		c.MaxConns = 2
		if mutate != nil {
			mutate(c)
		}
	})
	const rounds = 30
	for range rounds {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Conn().Close(ctx); err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	p.Close()
	b.check(t, rounds)
}
