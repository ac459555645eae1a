package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writes from many goroutines while String reads keep every byte; under
// -race an unguarded bytes.Buffer fails here.
func TestBufferTakesConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if _, err := b.Write([]byte("x")); err != nil {
					t.Error(err)
				}
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("%d bytes after 800 one-byte writes", len(got))
	}
}
