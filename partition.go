package shoal

import "sync/atomic"

// cacheLine is the size we pad hot structures to. 128 rather than 64 because
// x86 prefetches cache lines in adjacent pairs, and ARM64 servers often have
// 128-byte lines.
const cacheLine = 128

// partition is one of the pool's idle stacks with the counter that the
// goroutines popping from it update. Each sits on its own cache lines, so
// cores working on different partitions do not invalidate each other.
//
// The counters count waits for this partition's connections, so the
// goroutine that was just handed one updates a line it already holds
// instead of a pool-wide one every core contends for. (Acquires themselves
// are counted by the leases' hand-out generations: nothing at all.)
type partition[T any] struct {
	idle      idleStack[T]
	waited    atomic.Int64 // acquires of this partition's connections that had to wait
	waitNanos atomic.Int64 // and how long they waited in all
	_         [cacheLine - 24]byte
}
