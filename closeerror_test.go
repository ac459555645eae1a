package shoal_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// A Close whose context ends says what it still waited for: the leases held,
// the oldest one's age and, with LeakThreshold or tracing, the code that
// took it. (An external test, so that the acquirer is code outside the
// package, as a user's is.)
func TestCloseErrorSaysWhatIsHeld(t *testing.T) {
	for name, cfg := range map[string]shoal.Config[int]{
		"LeakThreshold": {LeakThreshold: time.Hour},
		"tracing":       {Observer: tracingObserver{}},
	} {
		t.Run(name, func(t *testing.T) { testCloseErrorSaysWhatIsHeld(t, cfg) })
	}
}

func testCloseErrorSaysWhatIsHeld(t *testing.T, cfg shoal.Config[int]) {
	synctest.Test(t, func(t *testing.T) {
		cfg.Name, cfg.MaxConns = "reports", 3
		cfg.Dial = func(context.Context) (int, error) { return 1, nil }
		p, err := shoal.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		oldest := holdForReport(t, p)
		time.Sleep(2 * time.Second)
		newer := holdForReport(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = p.Close(ctx)
		var ce *shoal.CloseError
		if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close: %v, want a *CloseError wrapping the deadline", err)
		}
		const by = "github.com/shoalpool/shoal_test.holdForReport"
		if ce.Held != 2 || ce.OldestHeld != 3*time.Second || ce.HeldBy != by {
			t.Fatalf("CloseError %+v; want 2 held, the oldest for 3s, by %s", *ce, by)
		}
		want := `shoal pool "reports": close: context deadline exceeded with 2 leases still held (the oldest for 3s, acquired by ` + by + ")"
		if err.Error() != want {
			t.Fatalf("Close: %q\nwant   %q", err, want)
		}
		oldest.Release()
		newer.Release()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// holdForReport acquires a lease; it is the acquirer a CloseError names.
func holdForReport(t *testing.T, p *shoal.Pool[int]) shoal.Lease[int] {
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}
