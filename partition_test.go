package shoal

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
)

// TestPartitionsAboveMaxConns holds what an explicit Partitions larger than
// MaxConns does: New accepts it (SetMaxConns may raise the limit later, and
// lowers it below the partitions anyway), the partitions beyond the
// connections stay empty, and nothing else changes. Every goroutine, whatever
// its home partition, finds every idle connection (TryAcquireIdle, which
// neither waits nor dials, takes one), no acquire waits or dials while one is
// idle, a connection dialled later lands on a partition that was empty and
// is found as well, and Stats count as with one partition.
func TestPartitionsAboveMaxConns(t *testing.T) {
	for _, tc := range []struct{ partitions, maxConns int }{{16, 4}, {maxPartitions, 1}} {
		t.Run(fmt.Sprintf("%dx%d", tc.partitions, tc.maxConns), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: tc.maxConns, Partitions: tc.partitions})
				if p.feat.partitions != tc.partitions {
					t.Fatalf("%d partitions, want the %d asked for", p.feat.partitions, tc.partitions)
				}
				open := func() {
					var held []Lease[*fakeConn]
					for range tc.maxConns {
						held = append(held, mustAcquire(t, p))
					}
					for _, l := range held {
						l.Release()
					}
				}
				open()
				// Goroutines have their own stacks, so their home
				// partitions spread over all of them, most of them empty.
				// Each takes one idle connection and gives it back.
				takeFromEverywhere := func(round string) {
					for g := range 4 * tc.partitions {
						got := make(chan error, 1)
						go func() {
							l, err := p.TryAcquireIdle()
							if err == nil {
								l.Release()
							}
							got <- err
						}()
						if err := <-got; err != nil {
							t.Fatalf("%s: goroutine %d: TryAcquireIdle: %v, with %d connections idle", round, g, err, p.Stats().IdleConns)
						}
					}
				}
				takeFromEverywhere("first connections")

				// As many callers as connections at once: none waits, none
				// dials. (The first acquires waited for their dials.)
				before := p.Stats()
				leases := make(chan Lease[*fakeConn], tc.maxConns)
				for range tc.maxConns {
					go func() { leases <- mustAcquire(t, p) }()
				}
				synctest.Wait()
				if s := p.Stats(); s.Dials != int64(tc.maxConns) || s.WaitedAcquires != before.WaitedAcquires || s.InUseConns != tc.maxConns {
					t.Fatalf("every connection taken at once: %d dials, %d more waited, %d in use; want %d, 0, %d",
						s.Dials, s.WaitedAcquires-before.WaitedAcquires, s.InUseConns, tc.maxConns, tc.maxConns)
				}
				// One more caller waits, and a release serves it.
				waiter := acquireAsync(context.Background(), p)
				wantWaiters(t, p, 1)
				(<-leases).Release()
				l := <-waiter
				if l.rec == nil {
					t.Fatal("the waiter failed")
				}
				if s := p.Stats(); s.WaitedAcquires != before.WaitedAcquires+1 {
					t.Errorf("%d more acquires waited, want the one that found every connection held", s.WaitedAcquires-before.WaitedAcquires)
				}
				leases <- l

				// Discarded and dialled again, the connections go round to
				// the partitions that were empty, and are found there.
				for range tc.maxConns {
					(<-leases).Discard()
				}
				synctest.Wait()
				open()
				if tc.partitions > tc.maxConns {
					p.ex.slots.each(func(c *conn[*fakeConn]) bool {
						if int(c.part) < tc.maxConns {
							t.Errorf("a redialled connection rests on partition %d, want one past the first %d", c.part, tc.maxConns)
						}
						return true
					})
				}
				takeFromEverywhere("redialled connections")
				s := p.Stats()
				if s.TotalConns != tc.maxConns || s.IdleConns != tc.maxConns || s.Closed != int64(tc.maxConns) ||
					s.Dials != int64(2*tc.maxConns) || s.Waiting != 0 {
					t.Errorf("Stats %+v; want %d open and idle, %d closed, %d dials", s, tc.maxConns, tc.maxConns, 2*tc.maxConns)
				}
			})
		})
	}
}
