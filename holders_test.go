package shoal_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// reportHolder stands for user code that takes a connection and keeps it.
//
//go:noinline
func reportHolder(t *testing.T, p *shoal.Pool[int]) shoal.Lease[int] {
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// exhaust fills a pool of two connections: one lease taken at the bubble's
// start and kept, the other taken then too, released after 5.5s to a
// waiter queued at 5s. A second waiter, queued at 5s with a 1s deadline,
// times out at 6s; its error is returned. At that moment one lease has
// been held 6s (longer than the wait) and the other 0.5s.
func exhaust(t *testing.T, cfg shoal.Config[int]) (*shoal.Pool[int], error) {
	cfg.Dial = func(context.Context) (int, error) { return 1, nil }
	cfg.MaxConns = 2
	p, err := shoal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	kept := reportHolder(t, p)
	t.Cleanup(kept.Release)
	other := reportHolder(t, p)
	time.Sleep(5 * time.Second)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the first waiter: it gets other's connection and keeps it
		defer wg.Done()
		l, err := p.Acquire(context.Background())
		if err == nil {
			time.Sleep(time.Hour)
			l.Release()
		}
	}()
	synctest.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Acquire(ctx)
		errc <- err
	}()
	synctest.Wait()
	time.Sleep(500 * time.Millisecond)
	other.Release()
	err = <-errc
	t.Cleanup(wg.Wait) // the first waiter ends with the bubble's hour
	return p, err
}

func exhaustionOf(t *testing.T, err error) *shoal.Exhaustion {
	t.Helper()
	var ae *shoal.AcquireError
	if !errors.As(err, &ae) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on an exhausted pool returned %v, want an AcquireError with DeadlineExceeded", err)
	}
	if ae.Exhausted == nil {
		t.Fatalf("AcquireError.Exhausted is nil on a pool whose every connection was held: %v", err)
	}
	return ae.Exhausted
}

func TestExhaustionNamesTheOldestHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := exhaust(t, shoal.Config[int]{LeakThreshold: time.Hour})
		x := exhaustionOf(t, err)
		want := shoal.Exhaustion{Held: 2, Timed: true, Longer: 1, Oldest: 6 * time.Second,
			OldestBy: "github.com/shoalpool/shoal_test.reportHolder"}
		if *x != want {
			t.Fatalf("Exhausted = %+v, want %+v", *x, want)
		}
		const tail = "; every connection held: 2 leases, 1 of them for longer than this wait; " +
			"the oldest for 6s, acquired by github.com/shoalpool/shoal_test.reportHolder"
		if !strings.HasSuffix(err.Error(), tail) || !strings.Contains(err.Error(), "context deadline exceeded (waited 1s for one of 2 connections: 2 in use") {
			t.Fatalf("error reads\n\t%v\nwant it to end with\n\t%s", err, tail)
		}
	})
}

func TestExhaustionWithAnObserverHasAgesButNoCode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := exhaust(t, shoal.Config[int]{Observer: shoal.BaseObserver{}})
		x := exhaustionOf(t, err)
		want := shoal.Exhaustion{Held: 2, Timed: true, Longer: 1, Oldest: 6 * time.Second}
		if *x != want {
			t.Fatalf("Exhausted = %+v, want %+v", *x, want)
		}
		if !strings.HasSuffix(err.Error(), "; the oldest for 6s") {
			t.Fatalf("error reads %v", err)
		}
		if got := p.Holders(); len(got) != 2 || got[0] != (shoal.Holder{Held: 6 * time.Second}) || got[1].AcquiredBy != "" {
			t.Fatalf("Holders = %+v, want ages and no code", got)
		}
	})
}

// tracingObserver is an Observer that traces waits, as shoalotel's does:
// with it the pool is tracing.
type tracingObserver struct{ shoal.BaseObserver }

func (tracingObserver) TraceWait(context.Context, time.Time, time.Duration, error) {}

// With tracing on and no LeakThreshold, the message still names the code
// that took the oldest lease.
func TestExhaustionWithATracerNamesTheTaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := exhaust(t, shoal.Config[int]{Observer: tracingObserver{}})
		x := exhaustionOf(t, err)
		by := "github.com/shoalpool/shoal_test.reportHolder"
		want := shoal.Exhaustion{Held: 2, Timed: true, Longer: 1, Oldest: 6 * time.Second, OldestBy: by}
		if *x != want {
			t.Fatalf("Exhausted = %+v, want %+v", *x, want)
		}
		if !strings.HasSuffix(err.Error(), "; the oldest for 6s, acquired by "+by) {
			t.Fatalf("error reads %v", err)
		}
		// The first waiter took the other connection in a goroutine of
		// exhaust's own, a function literal in it.
		got := p.Holders()
		if len(got) != 2 || got[0].AcquiredBy != by || !strings.HasPrefix(got[1].AcquiredBy, "github.com/shoalpool/shoal_test.exhaust.func") {
			t.Fatalf("Holders = %+v", got)
		}
	})
}

func TestExhaustionUntimedSaysWhatWouldTell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := exhaust(t, shoal.Config[int]{})
		x := exhaustionOf(t, err)
		if want := (shoal.Exhaustion{Held: 2}); *x != want {
			t.Fatalf("Exhausted = %+v, want %+v", *x, want)
		}
		if !strings.HasSuffix(err.Error(), "every connection held: 2 leases (an Observer or LeakThreshold would say for how long)") {
			t.Fatalf("error reads %v", err)
		}
	})
}

// A wait that ends while a connection is still being dialled is not
// exhaustion: the pool was not full of holders.
func TestNoExhaustionWhileDialing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		defer close(block)
		p, err := shoal.New(shoal.Config[int]{
			MaxConns: 2, LeakThreshold: time.Hour,
			Dial: func(ctx context.Context) (int, error) {
				select {
				case <-block:
				case <-ctx.Done():
				}
				return 0, errors.New("no")
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = p.Acquire(ctx)
		var ae *shoal.AcquireError
		if !errors.As(err, &ae) {
			t.Fatalf("Acquire = %v, want an AcquireError", err)
		}
		if ae.Exhausted != nil || strings.Contains(err.Error(), "every connection held") {
			t.Fatalf("a wait on a dial reads as exhaustion: %v", err)
		}
	})
}

// holdersRecorder is an Observer that keeps the Holders function the pool
// attaches.
type holdersRecorder struct {
	shoal.BaseObserver
	mu       sync.Mutex
	holders  func() []shoal.Holder
	detached bool
}

func (o *holdersRecorder) AttachHolders(h func() []shoal.Holder) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.holders = h
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.detached = true
	}
}

func TestHoldersOldestFirstAndAttached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &holdersRecorder{}
		p, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 3, LeakThreshold: time.Hour,
			// Through MultiObserver, as a program with metrics and the page has it.
			Observer: shoal.MultiObserver(shoal.BaseObserver{}, rec),
		})
		if err != nil {
			t.Fatal(err)
		}
		first := reportHolder(t, p)
		time.Sleep(3 * time.Second)
		second := reportHolder(t, p)
		time.Sleep(2 * time.Second)
		rec.mu.Lock()
		holders := rec.holders
		rec.mu.Unlock()
		if holders == nil {
			t.Fatal("the pool did not attach its Holders to an Observer that asks for them")
		}
		got := holders()
		by := "github.com/shoalpool/shoal_test.reportHolder"
		want := []shoal.Holder{{Held: 5 * time.Second, AcquiredBy: by}, {Held: 2 * time.Second, AcquiredBy: by}}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("Holders = %+v, want %+v", got, want)
		}
		first.Release()
		second.Release()
		if got := p.Holders(); len(got) != 0 {
			t.Fatalf("Holders after every release = %+v", got)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if !rec.detached {
			t.Fatal("Close did not detach the holders")
		}
	})
}

// With tracing on, Holders names the takers as with LeakThreshold, through
// MultiObserver as a program with traces and the page has it.
func TestHoldersNameTheTakerWithATracer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &holdersRecorder{}
		p, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 3,
			Observer: shoal.MultiObserver(tracingObserver{}, rec),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		first := reportHolder(t, p)
		defer first.Release()
		time.Sleep(3 * time.Second)
		second := reportHolder(t, p)
		defer second.Release()
		time.Sleep(2 * time.Second)
		rec.mu.Lock()
		holders := rec.holders
		rec.mu.Unlock()
		by := "github.com/shoalpool/shoal_test.reportHolder"
		want := []shoal.Holder{{Held: 5 * time.Second, AcquiredBy: by}, {Held: 2 * time.Second, AcquiredBy: by}}
		if got := holders(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("Holders = %+v, want %+v", got, want)
		}
	})
}

// offTracer is a WaitTracer whose tracing is off (Tracing false), as
// shoalotel's is without wait spans; it counts the waits it is told of.
type offTracer struct {
	shoal.BaseObserver
	waits *atomic.Int64
}

func (o offTracer) TraceWait(context.Context, time.Time, time.Duration, error) { o.waits.Add(1) }
func (offTracer) Tracing() bool                                                { return false }

// A WaitTracer that says its tracing is off costs what an Observer does:
// no taker is named, alone or through MultiObserver, and no wait is traced.
func TestTracerWithTracingOffNamesNoTaker(t *testing.T) {
	for _, multi := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			rec := &holdersRecorder{}
			off := offTracer{waits: new(atomic.Int64)}
			var obs shoal.Observer = off
			if multi {
				obs = shoal.MultiObserver(off, rec)
			}
			p, err := shoal.New(shoal.Config[int]{
				Dial:     func(context.Context) (int, error) { return 1, nil },
				MaxConns: 1,
				Observer: obs,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			held := reportHolder(t, p)
			defer held.Release()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err = p.Acquire(ctx)
			var ae *shoal.AcquireError
			if !errors.As(err, &ae) || ae.Exhausted == nil {
				t.Fatalf("multi %v: acquire on a full pool: %v, want an exhausted AcquireError", multi, err)
			}
			if strings.Contains(err.Error(), "reportHolder") {
				t.Errorf("multi %v: tracing is off, yet the error names the taker: %v", multi, err)
			}
			if got := p.Holders(); len(got) != 1 || got[0].AcquiredBy != "" {
				t.Errorf("multi %v: Holders = %+v, want one with no taker", multi, got)
			}
			if n := off.waits.Load(); n != 0 {
				t.Errorf("multi %v: %d waits traced with tracing off", multi, n)
			}
		})
	}
}

// TestExhaustionMessageInDocs: the message docs/operating.md shows is,
// whole, the one a pool named "orders" writes, with the holder named as a
// program's main package would name it.
func TestExhaustionMessageInDocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := exhaust(t, shoal.Config[int]{Name: "orders", LeakThreshold: time.Hour})
		got := strings.ReplaceAll(err.Error(), "github.com/shoalpool/shoal_test.reportHolder", "main.handleReport")
		doc, rerr := os.ReadFile("docs/operating.md")
		if rerr != nil {
			t.Fatal(rerr)
		}
		var shown []string
		for line := range strings.Lines(string(doc)) {
			if strings.Contains(line, "every connection held: 2 leases") && strings.Contains(line, ": acquire: ") {
				shown = append(shown, strings.TrimSpace(line))
			}
		}
		if len(shown) != 1 || shown[0] != got {
			t.Fatalf("docs/operating.md shows\n\t%s\nthe pool writes\n\t%s", strings.Join(shown, "\n\t"), got)
		}
	})
}

// TestAcquireErrorInDocs: the timeout README.md and docs/operating.md show
// first, 16 connections held and 31 callers waiting with no Observer or
// LeakThreshold, is, whole, the one the pool writes (README's pool is
// named "cache").
func TestAcquireErrorInDocs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := shoal.New(shoal.Config[int]{Name: "orders", MaxConns: 16,
			Dial: func(context.Context) (int, error) { return 1, nil }})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		for range 16 {
			l := reportHolder(t, p)
			defer l.Release()
		}
		waiters, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				if l, err := p.Acquire(waiters); err == nil {
					l.Release()
				}
			})
		}
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err = p.Acquire(ctx)
		stop()
		wg.Wait()
		if err == nil {
			t.Fatal("an acquire with every connection held and a 2s deadline succeeded")
		}
		got := err.Error()
		for _, file := range []string{"README.md", "docs/operating.md"} {
			doc, rerr := os.ReadFile(file)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var shown []string
			for line := range strings.Lines(string(doc)) {
				_, msg, ok := strings.Cut(line, "shoal pool ")
				if ok && strings.Contains(msg, "(waited 2s for one of 16 connections") {
					msg = strings.Trim(strings.TrimSpace(msg), "`")
					shown = append(shown, strings.Replace("shoal pool "+msg, `"cache"`, `"orders"`, 1))
				}
			}
			if len(shown) != 1 || shown[0] != got {
				t.Errorf("%s shows\n\t%s\nthe pool writes\n\t%s", file, strings.Join(shown, "\n\t"), got)
			}
		}
	})
}

// In a multiplexed pool the holders are the streams' leases, and a full
// pool's timeout counts them.
func TestExhaustionMultiplexed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := shoal.New(shoal.Config[int]{
			Dial:     func(context.Context) (int, error) { return 1, nil },
			MaxConns: 1, MaxStreams: 2, LeakThreshold: time.Hour,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		a := reportHolder(t, p)
		defer a.Release()
		time.Sleep(2 * time.Second)
		b := reportHolder(t, p)
		defer b.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = p.Acquire(ctx)
		x := exhaustionOf(t, err)
		want := shoal.Exhaustion{Held: 2, Timed: true, Longer: 1, Oldest: 3 * time.Second,
			OldestBy: "github.com/shoalpool/shoal_test.reportHolder"}
		if *x != want {
			t.Fatalf("Exhausted = %+v, want %+v", *x, want)
		}
		if got := p.Holders(); len(got) != 2 || got[0].Held != 3*time.Second || got[1].Held != time.Second {
			t.Fatalf("Holders = %+v", got)
		}
	})
}
