package shoalhttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/failrun"
	"github.com/shoalpool/shoal/internal/syncbuf"
)

// An https origin that has never answered is treated as a pool's server
// that is down (docs/operating.md): after its first connection fails,
// requests fail at once with that error for the core's backoff instead of
// each dialling, and the run of failures is logged once, with the pool and
// the origin. The bubble's clock stands still while the requests run, so
// the backoff has not ended until the test sleeps through it.
func TestFailedFirstDialBacksOffAndIsLogged(t *testing.T) {
	addr := refusedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		var (
			dials atomic.Int64
			b     syncbuf.Buffer
		)
		tr, err := NewTransport(Options{Name: "api", Proxy: NoProxy, Logger: newTestLogger(&b),
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}})
		if err != nil {
			t.Fatal(err)
		}
		send := func() {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tr.RoundTrip(req)
			if !errors.Is(err, shoal.ErrDial) {
				t.Fatalf("RoundTrip to a closed port: %v, want shoal.ErrDial", err)
			}
		}
		for range 20 {
			send()
		}
		if n := dials.Load(); n != 1 {
			t.Errorf("20 requests within the backoff dialled %d times, want 1", n)
		}
		time.Sleep(failrun.BackoffMin)
		send()
		if n := dials.Load(); n != 2 {
			t.Errorf("a request after the backoff: %d dials in all, want 2", n)
		}
		logged := b.String()
		if n := strings.Count(logged, "msg=\"shoal: dial failed\""); n != 1 {
			t.Errorf("the run of failures logged %d \"dial failed\" lines, want 1:\n%s", n, logged)
		}
		for _, want := range []string{"level=WARN", "origin=https://" + addr, "pool=\"api https://" + addr + "\"", "connection refused"} {
			if !strings.Contains(logged, want) {
				t.Errorf("the log lacks %s:\n%s", want, logged)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = tr.Close(ctx)
	})
}

// An origin that stays down while requests come now and then, each after
// the backoff has long ended, is one run of failures, logged as the core
// logs its dials: once as it starts, then at most once a minute. Each
// request after a quiet spell is not announced as a new failure.
func TestOccasionalRequestsToADownOriginAreLoggedOnce(t *testing.T) {
	addr := refusedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		var b syncbuf.Buffer
		tr, err := NewTransport(Options{Proxy: NoProxy, Logger: newTestLogger(&b)})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close(context.Background())
		for range 50 {
			req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.RoundTrip(req); !errors.Is(err, shoal.ErrDial) {
				t.Fatalf("RoundTrip to a closed port: %v, want shoal.ErrDial", err)
			}
			time.Sleep(time.Second)
		}
		logged := b.String()
		if n := strings.Count(logged, "msg=\"shoal: dial"); n != 1 {
			t.Errorf("a request a second for less than a minute logged %d lines about failing dials, want 1:\n%s", n, logged)
		}
	})
}

// TestProbeFailureIsShared: requests that reach an https origin while its
// first connection is being made wait for that one dial and share its
// failure, instead of each dialling a server that is down. The bubble
// lets the dial end only once every request is waiting, on the dial or
// for it.
func TestProbeFailureIsShared(t *testing.T) {
	addr := refusedAddr(t)
	synctest.Test(t, func(t *testing.T) {
		var dials atomic.Int64
		release := make(chan struct{})
		tr := newTestTransport(t, Options{Proxy: NoProxy,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				<-release
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}})
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				_, err := tr.RoundTrip(mustRequest(t, "https://"+addr+"/"))
				if !errors.Is(err, shoal.ErrDial) {
					t.Errorf("got %v, want an error matching shoal.ErrDial", err)
				}
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		if n := dials.Load(); n != 1 {
			t.Errorf("20 requests that arrived during the first dial dialled %d times, want 1", n)
		}
	})
}
