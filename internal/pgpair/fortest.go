package pgpair

import (
	"context"
	"os"
	"testing"
	"time"
)

// lockWait bounds how long a test waits for another package's tests to be
// done with the pair.
const lockWait = 5 * time.Minute

// ForTest returns the pair for t: healthy, locked for t alone, and put back
// (Restore) when t ends, so that every server t stopped runs again and the
// standby is a standby again. Without the environment (or the rights to
// control the servers) t is skipped, or fails under SHOAL_REQUIRE_SERVICES=1.
func ForTest(t testing.TB) *Pair {
	t.Helper()
	p, err := Load()
	if err != nil {
		if os.Getenv(envRequire) == "1" {
			t.Fatalf("%v; and %s=1", err, envRequire)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	unlock, err := Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last in, first out: the restore before the unlock.
	t.Cleanup(unlock)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), rebuildTimeout+commandTimeout)
		defer cancel()
		if err := p.Restore(ctx); err != nil {
			t.Errorf("putting the pair back after the test: %v", err)
		}
	})
	if err := p.Restore(ctx); err != nil {
		t.Fatalf("the pair is not healthy and could not be rebuilt: %v", err)
	}
	return p
}
