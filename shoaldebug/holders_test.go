package shoaldebug_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// reportHandler stands for the code that takes a connection and keeps it.
//
//go:noinline
func reportHandler(t *testing.T, p *shoal.Pool[int]) shoal.Lease[int] {
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestHoldersOldestFirst: the page lists the leases held now, the longest
// held first, with their age and the function that took them.
func TestHoldersOldestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := shoaldebug.NewRegistry()
		pool, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 3, LeakThreshold: time.Hour, Observer: reg.NewObserver("orders"),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close(context.Background())
		first := reportHandler(t, pool)
		time.Sleep(3 * time.Second)
		second := reportHandler(t, pool)
		time.Sleep(time.Second)

		const by = "github.com/shoalpool/shoal/shoaldebug_test.reportHandler"
		want := []shoaldebug.Holder{{Held: 4 * time.Second, AcquiredBy: by}, {Held: time.Second, AcquiredBy: by}}
		got := reg.Snapshot().Pools[0].Holders
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("Holders = %+v, want %+v", got, want)
		}
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/shoal", nil))
		html := rec.Body.String()
		older := strings.Index(html, `data-k="heldfor">4s<`)
		younger := strings.Index(html, `data-k="heldfor">1s<`)
		if older < 0 || younger < older || !strings.Contains(html, `data-k="heldby">`+by+`<`) {
			t.Fatalf("the page does not list the holders oldest first:\n%s", html)
		}
		rec = httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/shoal?format=json", nil))
		var page shoaldebug.Page
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		if got := page.Pools[0].Holders; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("the JSON's holders are %+v, want %+v:\n%s", got, want, rec.Body.String())
		}

		first.Release()
		second.Release()
		if got := reg.Snapshot().Pools[0].Holders; len(got) != 0 {
			t.Fatalf("Holders after every release = %+v", got)
		}
	})
}

// TestHoldersKeptAreTheOldest: of more leases than the page lists, it
// lists the 32 held longest.
func TestHoldersKeptAreTheOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := shoaldebug.NewRegistry()
		const leases, kept = 40, 32
		pool, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: leases, Observer: reg.NewObserver("orders"),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close(context.Background())
		for range leases { // one a second: the i-th is held leases-i seconds
			defer reportHandler(t, pool).Release()
			time.Sleep(time.Second)
		}
		got := reg.Snapshot().Pools[0].Holders
		if len(got) != kept {
			t.Fatalf("%d holders listed of %d held, want %d", len(got), leases, kept)
		}
		for i, h := range got {
			if want := time.Duration(leases-i) * time.Second; h.Held != want {
				t.Fatalf("holder %d held %v, want %v: the %d held longest, oldest first", i, h.Held, want, kept)
			}
		}
	})
}

// waitTracer is an Observer that traces waits, as shoalotel's does.
type waitTracer struct{ shoal.BaseObserver }

func (waitTracer) TraceWait(context.Context, time.Time, time.Duration, error) {}

// TestHoldersNamedWithTracing: with tracing on (a program's traces and the
// page through MultiObserver) and no LeakThreshold, the page still names
// the function that took each lease.
func TestHoldersNamedWithTracing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := shoaldebug.NewRegistry()
		pool, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 2, Observer: shoal.MultiObserver(waitTracer{}, reg.NewObserver("orders")),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close(context.Background())
		defer reportHandler(t, pool).Release()
		time.Sleep(2 * time.Second)

		const by = "github.com/shoalpool/shoal/shoaldebug_test.reportHandler"
		if got := reg.Snapshot().Pools[0].Holders; len(got) != 1 || got[0] != (shoaldebug.Holder{Held: 2 * time.Second, AcquiredBy: by}) {
			t.Fatalf("Holders = %+v, want one held 2s by %s", got, by)
		}
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/shoal", nil))
		if html := rec.Body.String(); !strings.Contains(html, `data-k="heldby">`+by+`<`) {
			t.Fatalf("the page does not name the holder:\n%s", html)
		}
	})
}
