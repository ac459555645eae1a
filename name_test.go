package shoal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A pool without a Name makes one up from its connection type and a count
// of such pools; Stats and the errors a caller reads carry it.
func TestPoolNameDefaultsFromTheType(t *testing.T) {
	a, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	b, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	re := regexp.MustCompile(`^shoal\.fakeConn-(\d+)$`)
	ma, mb := re.FindStringSubmatch(a.Stats().Name), re.FindStringSubmatch(b.Stats().Name)
	if ma == nil || mb == nil {
		t.Fatalf("names %q, %q; want shoal.fakeConn-<n>", a.Stats().Name, b.Stats().Name)
	}
	na, _ := strconv.Atoi(ma[1])
	nb, _ := strconv.Atoi(mb[1])
	if nb != na+1 {
		t.Errorf("names %q then %q; want consecutive counts", a.Stats().Name, b.Stats().Name)
	}
	named, _ := newTestPool(t, Config[*fakeConn]{Name: "orders", MaxConns: 1})
	if got := named.Stats().Name; got != "orders" {
		t.Errorf("Stats.Name = %q, want orders", got)
	}
	if got := named.Stats().String(); !strings.HasPrefix(got, `pool "orders": open 0/1`) {
		t.Errorf("Stats.String() = %q, want it to start with the name", got)
	}
}

// The errors a caller reads name the pool.
func TestPoolNameInErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{Name: "orders", MaxConns: 1, MaxWaiters: 1})
		l := mustAcquire(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		go func() {
			if l, err := p.Acquire(ctx); err == nil {
				l.Release()
			}
		}()
		synctest.Wait()
		_, err := p.Acquire(context.Background()) // past MaxWaiters
		var ae *AcquireError
		if !errors.As(err, &ae) || ae.Pool != "orders" || !strings.HasPrefix(err.Error(), `shoal pool "orders": acquire: pool exhausted`) {
			t.Errorf("acquire past MaxWaiters: %v; want an AcquireError naming the pool", err)
		}
		if err := p.SetMaxConns(0); err == nil || !strings.HasPrefix(err.Error(), `shoal pool "orders": SetMaxConns(0)`) {
			t.Errorf("SetMaxConns(0): %v; want an error naming the pool", err)
		}
		l.Release()
		synctest.Wait()
	})
}

// Every line a pool logs has its name in a "pool" attribute, and a pool
// with no Logger logs to slog.Default(), so a failing server is seen;
// slog.DiscardHandler silences it.
func TestPoolLogsUnderItsNameToTheDefaultLogger(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)

	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{}
		p, _ := newTestPool(t, Config[*fakeConn]{Name: "orders", MaxConns: 1, Dial: d.dial, LeakThreshold: time.Second})
		l := mustAcquire(t, p) // opened: a Debug line
		time.Sleep(2 * time.Second)
		synctest.Wait() // a leak: a Warn line
		l.Discard()     // closed: a Debug line
		d.mu.Lock()
		d.err = errors.New("boom")
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _ = p.Acquire(ctx) // dial failed: a Warn line
		synctest.Wait()
	})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for _, want := range []string{"connection opened", "lease held past LeakThreshold", "connection closed", "dial failed"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q line in the default logger's output:\n%s", want, buf.String())
		}
	}
	for _, line := range lines {
		if !strings.Contains(line, " pool=orders ") {
			t.Errorf("line without pool=orders: %s", line)
		}
	}

	buf.Reset()
	quiet, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Logger: slog.New(slog.DiscardHandler),
		Dial: func(context.Context) (*fakeConn, error) { return nil, errors.New("boom") }})
	_, _ = quiet.Acquire(context.Background())
	if buf.Len() != 0 {
		t.Errorf("a pool given slog.DiscardHandler logged to the default logger:\n%s", buf.String())
	}
}

// A pool named after its connection string, password and all, shows the
// name with the password masked where it stands, and only that changed,
// in its Stats, its errors and its log lines: each of them may reach a
// log. Before, only Stats.String and the live page masked it.
func TestPoolNameMasksAPassword(t *testing.T) {
	const name = "postgres://app:hunter2@db.internal/orders?sslmode=disable"
	const shown = "postgres://app:xxxxx@db.internal/orders?sslmode=disable"
	var buf bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{}
		p, _ := newTestPool(t, Config[*fakeConn]{Name: name, MaxConns: 1, Dial: d.dial,
			Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if got := p.Stats().Name; got != shown {
			t.Errorf("Stats.Name = %q, want %q", got, shown)
		}
		l := mustAcquire(t, p) // a Debug line
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Acquire(ctx)
		if msg := fmt.Sprint(err); strings.Contains(msg, "hunter2") || !strings.Contains(msg, strconv.Quote(shown)) {
			t.Errorf("the acquire's error %q, want it to name the pool as %q", msg, shown)
		}
		l.Release()
	})
	if out := buf.String(); strings.Contains(out, "hunter2") || !strings.Contains(out, "pool="+strconv.Quote(shown)) {
		t.Errorf("the log shows the name as:\n%s\nwant pool=%s", out, shown)
	}
}
