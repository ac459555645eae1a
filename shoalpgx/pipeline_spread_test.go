package shoalpgx

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// Callers spread over the shared connections before they share one: six
// callers running statements one after another, MaxConns 8 and Pipeline
// 16, come to use six shared connections or more, where opening one only
// once the open ones were full would have kept them three deep on the two
// kept open, each statement waiting for the ones ahead of it.
func TestPipelineSpreadsCallersBeforeSharing(t *testing.T) {
	p := newPipelinedPool(t, 8, 16, nil)
	ctx := pgtest.Ctx(t)
	const callers = 6
	var done atomic.Bool
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for !done.Load() {
				if _, err := p.Exec(ctx, "SELECT pg_sleep(0.005)"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	pgtest.WaitFor(t, 10*time.Second, "a shared connection per caller", func() bool {
		return p.pipe.core.Stats().TotalConns >= callers
	})
	done.Store(true)
	wg.Wait()
}
