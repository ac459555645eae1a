package pgpair

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockPath is the file whose lock says who is hurting the pair: go test runs
// packages in parallel, and two of them promoting and rebuilding the same
// servers at once would each see the other's failover.
var lockPath = filepath.Join(os.TempDir(), "shoal-pgpair.lock")

// Lock waits (polling, bounded by ctx) for the pair's lock, which the
// kernel drops when this process exits, and returns its release.
func Lock(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("pgpair: open the pair's lock: %w", err)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("pgpair: lock %s: %w", lockPath, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("pgpair: another process holds the pair (%s): %w", lockPath, ctx.Err())
		case <-tick.C:
		}
	}
}
