package pgtest

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Config reads the test server's connection string, with the test's
// application_name (AppName), with parse (shoalpgx.ParseConfig), and lets
// mutate, when not nil, change the result.
func Config[C any](t testing.TB, parse func(string) (C, error), mutate func(C)) C {
	t.Helper()
	cfg, err := parse(withAppName(ConnString(t), AppName(t)))
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(cfg)
	}
	return cfg
}

// Open opens a pool for cfg with open (shoalpgx.NewWithConfig). At cleanup
// it closes the pool and checks that no goroutine started since Open was
// called is left. A Close that has not returned within closeLimit fails
// the test there, rather than hang the run until go test's timeout: a
// test that failed while it held a connection leaves Close waiting for it.
func Open[C any, P interface{ Close() }](t testing.TB, open func(context.Context, C) (P, error), cfg C) P {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	p, err := open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		closed := make(chan struct{})
		go func() {
			p.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(closeLimit):
			t.Errorf("the pool's Close had not returned %s after the test ended: a connection the test acquired is still held, or Close hangs", closeLimit)
			return
		}
		goleak.VerifyNone(t, ignore)
	})
	return p
}

// closeLimit bounds the wait for a test pool's Close at cleanup.
const closeLimit = 2 * time.Minute

// NewPool is Open for Config's config: a pool on the test server, closed
// and checked for leaked goroutines at cleanup.
func NewPool[C any, P interface{ Close() }](t testing.TB, parse func(string) (C, error), open func(context.Context, C) (P, error), mutate func(C)) P {
	t.Helper()
	return Open(t, open, Config(t, parse, mutate))
}

// withAppName returns connString with its application_name set to name,
// in the string's own form (URL or keyword/value).
func withAppName(connString, name string) string {
	if u, err := url.Parse(connString); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return connString + " application_name='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name) + "'"
}
