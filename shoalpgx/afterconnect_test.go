package shoalpgx

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// dialErrs is an Observer that passes on the errors of failed dials.
type dialErrs struct {
	shoal.BaseObserver
	errs chan error
}

func (o dialErrs) ObserveDial(_ time.Duration, err error) {
	if err != nil {
		select {
		case o.errs <- err:
		default:
		}
	}
}

// An AfterConnect that hangs (here on a channel, as one waiting on a lock
// or a silent server would, honouring its context) holds the pool's only
// place under MaxConns. An acquire whose context ends meanwhile returns at
// its end; and the hook's context ends at the connect timeout, so the dial
// fails with an error naming the hook, and the place is free
// again for the next dial. Before, the hook ran under the pool's own
// context, which ends only with Close: the pool was starved until then.
func TestHungAfterConnectFailsItsDialAtTheConnectTimeout(t *testing.T) {
	ctx := pgtest.Ctx(t)
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	var calls atomic.Int32
	obs := dialErrs{errs: make(chan error, 1)}
	p := newTestPool(t, func(c *Config) {
		c.Name = "hung-hook"
		c.MaxConns = 1
		c.ConnConfig.ConnectTimeout = time.Second
		c.Observer = obs
		c.AfterConnect = func(ctx context.Context, _ *pgx.Conn) error {
			if calls.Add(1) > 1 {
				return nil // only the first dial's hook hangs
			}
			entered <- struct{}{}
			select {
			case <-block:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	defer close(block)

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		c, err := p.Acquire(short)
		if err == nil {
			c.Release()
		}
		res <- err
	}()
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("AfterConnect was never called")
	}
	select {
	case err := <-res:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an acquire whose context ended during a hung AfterConnect: %v, want its deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an acquire did not return within 5s of its 300ms context's end while AfterConnect hung")
	}

	long, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// The caller waiting when the hung dial fails is told of it, as of any
	// failed dial, and so is one that comes before the retry's dial
	// connects (failing fast); then an acquire gets the place.
	var c *Conn
	pgtest.WaitFor(t, 10*time.Second, "an acquire after the hung AfterConnect's dial failed", func() bool {
		var err error
		c, err = p.Acquire(long)
		if err != nil && !strings.Contains(err.Error(), "AfterConnect") {
			t.Fatalf("an acquire after a hung AfterConnect, with 10s and a 1s connect timeout: %v (the hung dial kept the pool's only place)", err)
		}
		return err == nil
	})
	c.Release()
	select {
	case err := <-obs.errs:
		msg := err.Error()
		if !strings.Contains(msg, "AfterConnect") {
			t.Errorf("the hung dial's error does not name AfterConnect: %s", msg)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the hung dial's error does not wrap its deadline: %v", err)
		}
		if strings.Contains(msg, "shoal-secret") {
			t.Errorf("the error holds the password: %s", msg)
		}
	case <-ctx.Done():
		t.Fatal("no dial failed, yet the first dial's AfterConnect hung")
	}
}

// An AfterConnect error reaches the caller wrapped, as docs/from-pgxpool.md
// says: after the pool's name and "AfterConnect:", and errors.Is finds it.
func TestAfterConnectErrorIsWrapped(t *testing.T) {
	boom := errors.New("boom")
	p := newTestPool(t, func(c *Config) {
		c.Name = "orders"
		c.AfterConnect = func(context.Context, *pgx.Conn) error { return boom }
	})
	_, err := p.Exec(pgtest.Ctx(t), "select 1")
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `"orders"`) || !strings.Contains(err.Error(), "AfterConnect: boom") {
		t.Fatalf("%v; want the hook's error, wrapped as AfterConnect: boom, in an error naming the pool", err)
	}
}

// AfterConnect's context ends at the connect timeout counted from the
// hook's start: connect_timeout when the string sets it, 2 minutes when it
// does not (docs/from-pgxpool.md).
func TestAfterConnectDeadlineIsTheConnectTimeout(t *testing.T) {
	for _, c := range []struct {
		set, want time.Duration
	}{{0, 2 * time.Minute}, {7 * time.Second, 7 * time.Second}} {
		left := make(chan time.Duration, 1)
		p := newTestPool(t, func(cfg *Config) {
			cfg.ConnConfig.ConnectTimeout = c.set
			cfg.AfterConnect = func(ctx context.Context, _ *pgx.Conn) error {
				dl, _ := ctx.Deadline() // none: the zero time, far in the past
				select {
				case left <- time.Until(dl):
				default:
				}
				return nil
			}
		})
		if err := p.Ping(pgtest.Ctx(t)); err != nil {
			t.Fatal(err)
		}
		// The test's own context (pgtest.Ctx) ends sooner than 2 minutes:
		// the hook's must not be the caller's.
		if got := <-left; got > c.want || got < c.want-5*time.Second {
			t.Errorf("connect_timeout %s: AfterConnect's context had %s left, want %s", c.set, got.Round(time.Millisecond), c.want)
		}
	}
}
