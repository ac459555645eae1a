package shoal_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// The functions below stand for a program's code taking a connection each
// way the pool hands one out; with tracing on, Holders must name them, not
// the pool's frames between them and the hand-out.

//go:noinline
func takeWithAcquire(p *shoal.Pool[int]) shoal.Lease[int] {
	l, _ := p.Acquire(context.Background())
	return l
}

//go:noinline
func takeWithTryAcquire(p *shoal.Pool[int]) shoal.Lease[int] {
	l, _ := p.TryAcquire()
	return l
}

//go:noinline
func takeWithTryAcquireIdle(p *shoal.Pool[int]) shoal.Lease[int] {
	l, _ := p.TryAcquireIdle()
	return l
}

//go:noinline
func takeWithAcquireAllIdle(p *shoal.Pool[int]) shoal.Lease[int] {
	return p.AcquireAllIdle()[0]
}

// takeWithDo reads the holders from inside Do's function, while the lease
// is held.
//
//go:noinline
func takeWithDo(p *shoal.Pool[int]) (holders []shoal.Holder) {
	p.Do(context.Background(), func(int) error {
		holders = p.Holders()
		return nil
	})
	return holders
}

func TestTracingNamesTheTakerOfEveryKindOfAcquire(t *testing.T) {
	const pkg = "github.com/shoalpool/shoal_test."
	take := map[string]func(*shoal.Pool[int]) shoal.Lease[int]{
		"takeWithAcquire":        takeWithAcquire,
		"takeWithTryAcquire":     takeWithTryAcquire,
		"takeWithTryAcquireIdle": takeWithTryAcquireIdle,
		"takeWithAcquireAllIdle": takeWithAcquireAllIdle,
	}
	configs := map[string]shoal.Config[int]{
		"plain":       {MaxConns: 1},
		"checked":     {MaxConns: 1, MaxLifetime: time.Hour}, // every take goes past the fast path
		"multiplexed": {MaxConns: 1, MaxStreams: 2},
	}
	for cname, cfg := range configs {
		cfg.Dial = func(context.Context) (int, error) { return 1, nil }
		cfg.Observer = tracingObserver{}
		for fname, f := range take {
			if fname == "takeWithAcquireAllIdle" && cfg.MaxStreams > 1 {
				continue // multiplexed pools keep nothing idle to take all of
			}
			t.Run(cname+"/"+fname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					p, err := shoal.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close(context.Background())
					// One connection dialled, so that every take finds it idle.
					l, err := p.Acquire(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					l.Release()
					l = f(p)
					defer l.Release()
					if got := p.Holders(); len(got) != 1 || got[0].AcquiredBy != pkg+fname {
						t.Fatalf("Holders = %+v, want one acquired by %s", got, pkg+fname)
					}
				})
			})
		}
		t.Run(cname+"/takeWithDo", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := shoal.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				if got := takeWithDo(p); len(got) != 1 || got[0].AcquiredBy != pkg+"takeWithDo" {
					t.Fatalf("Holders = %+v, want one acquired by %stakeWithDo", got, pkg)
				}
			})
		})
		// An acquire that dials, and one handed a connection after a wait.
		t.Run(cname+"/waited", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := shoal.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				first := takeWithAcquire(p)
				if got := p.Holders(); len(got) != 1 || got[0].AcquiredBy != pkg+"takeWithAcquire" {
					t.Fatalf("after a dial, Holders = %+v", got)
				}
				if cfg.MaxStreams > 1 {
					defer takeWithAcquire(p).Release() // the connection's other stream
				}
				waited := make(chan shoal.Lease[int])
				go func() { waited <- takeAfterAWait(p) }()
				synctest.Wait()
				first.Release()
				l := <-waited
				defer l.Release()
				// In the multiplexed pool the other stream's holder is still
				// there.
				names := map[string]int{}
				for _, h := range p.Holders() {
					names[h.AcquiredBy]++
				}
				want := map[string]int{pkg + "takeAfterAWait": 1}
				if cfg.MaxStreams > 1 {
					want[pkg+"takeWithAcquire"] = 1
				}
				if len(names) != len(want) || names[pkg+"takeAfterAWait"] != 1 || names[pkg+"takeWithAcquire"] != want[pkg+"takeWithAcquire"] {
					t.Fatalf("after a wait, Holders = %+v", p.Holders())
				}
			})
		})
	}
}

//go:noinline
func takeAfterAWait(p *shoal.Pool[int]) shoal.Lease[int] {
	l, _ := p.Acquire(context.Background())
	return l
}
