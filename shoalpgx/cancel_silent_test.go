package shoalpgx

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// silentCancelTimeout is the tests' CancelTimeout: short, so that the
// fallback comes soon after the deadline.
const silentCancelTimeout = 200 * time.Millisecond

// ignoreCancelsUntilStop opens a PL/pgSQL body that sleeps until its
// variable stop, catching query_canceled: a statement that swallows cancel
// requests. The caller declares stop before it and closes the body after.
// The whole sleeping loop is inside the block that catches the cancel: a
// block entered for each sleep leaves a moment between sleeps, outside it,
// in which a cancel request stops the statement. What is left outside is
// the moment after a cancel is caught, which the next one, a retry 100ms
// later, does not meet.
const ignoreCancelsUntilStop = `
	BEGIN
		LOOP
			BEGIN
				WHILE clock_timestamp() < stop LOOP
					PERFORM pg_sleep(0.02);
				END LOOP;
				EXIT;
			EXCEPTION WHEN query_canceled THEN
				NULL;
			END;
		END LOOP;
	`

// hangLimit bounds a wait that only a hang would reach.
const hangLimit = 30 * time.Second

// execReturns runs sql on p under ctx and returns its error, failing the
// test if the statement has not returned within hangLimit.
func execReturns(t *testing.T, p *Pool, ctx context.Context, sql string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := p.Exec(ctx, sql)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(hangLimit):
		t.Fatalf("a statement whose context ended had not returned %s later", hangLimit)
		return nil
	}
}

// waitClosed waits, hangLimit at most, until the pool holds no connection
// and is closing none, and fails the test unless one was closed.
func waitClosed(t *testing.T, p *Pool) {
	t.Helper()
	for stop := time.Now().Add(hangLimit); ; {
		s := p.Stat().Shoal()
		if s.TotalConns == 0 && s.Closing == 0 {
			if s.Closed == 0 {
				t.Errorf("the pool holds no connection and closed none: %+v", s)
			}
			return
		}
		if time.Now().After(stop) {
			t.Fatalf("the connection of a statement the server did not answer was neither closed nor kept: %+v", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A server that never answers, neither the statement nor the cancel
// request (behind a proxy that stopped forwarding): the caller still
// returns, CancelTimeout after its deadline, with its context's error, and
// the connection is closed.
func TestCancelSilentServer(t *testing.T) {
	cs := pgtest.ConnString(t)
	u, err := url.Parse(cs)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := pgpair.NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxied, err := pgpair.ReplaceHost(cs, u.Host, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(proxied)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = pgtest.AppName(t)
	cfg.MaxConns, cfg.CancelTimeout = 1, silentCancelTimeout
	p := newPoolFor(t, cfg)
	// Before the pool closes: the proxy's end of pgx's cleanup hangs up.
	t.Cleanup(func() { _ = proxy.Close() })
	if err := p.Ping(pgtest.Ctx(t)); err != nil {
		t.Fatal(err)
	}

	proxy.Silence()
	ctx := pgtest.AbandonedCtx(t)
	err = execReturns(t, p, ctx, "SELECT 1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a statement on a silent server returned %v, want an error matching context.DeadlineExceeded", err)
	}
	waitClosed(t, p)
}

// A statement that swallows the cancel (PL/pgSQL catches query_canceled and
// goes on, for two seconds): the caller returns CancelTimeout after its
// deadline with its context's error, and the connection is closed, since
// whatever runs on it still runs.
func TestCancelIgnoredByTheStatement(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns, c.CancelTimeout = 1, silentCancelTimeout })
	// The connection first, and its backend: the context ends once the
	// statement sleeps inside the block that swallows the cancel. Ended at
	// a fixed time instead, on a loaded machine it could end before the
	// statement reached the block, and the cancel then stopped it, keeping
	// the connection rightly.
	pids := backendPIDs(t, p, 1)
	ctx := pgtest.SleepingCtx(t, pgtest.AdminConn(t), pids...)
	err := execReturns(t, p, ctx, "DO $$ DECLARE stop timestamptz := clock_timestamp() + interval '2 seconds';"+
		ignoreCancelsUntilStop+"END $$")
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		t.Errorf("a statement that ignores the cancel returned %v, want an error matching its context's (%v)", err, ctx.Err())
	}
	waitClosed(t, p)
}
