package shoaletcd

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// An Acquire for no pool of the Budget (here with two pools joined and a
// context naming neither) fails with an error that names the budget and
// counts its pools, read under the lock while other pools join and leave
// (run with -race).
func TestAcquireForNoPoolWhilePoolsJoinAndLeave(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	b := newBudget(t, addr, Options{Name: "db", Size: 4, Prefix: prefix})
	for range 2 {
		leave, err := b.Join(&fakePool{})
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
	}
	stop := make(chan struct{})
	var joins atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			leave, err := b.Join(&fakePool{})
			if err != nil {
				t.Error(err)
				return
			}
			leave()
			joins.Add(1)
		}
	}()
	for joins.Load() < 500 {
		_, err := b.Acquire(context.Background())
		if err == nil || !strings.Contains(err.Error(), `budget "db"`) || !strings.Contains(err.Error(), "no pool") {
			t.Errorf("Acquire for no pool: %v; want an error naming the budget", err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
