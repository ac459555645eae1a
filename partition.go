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
// The counters count acquires of this partition's connections, so the
// goroutine that just popped (or was handed) one updates a line it already
// holds instead of a pool-wide one every core contends for.
type partition struct {
	idle      idleStack
	acquires  atomic.Int64 // successful acquires of this partition's connections
	waited    atomic.Int64 // of which had to wait
	waitNanos atomic.Int64 // and waited this long in all
	_         [cacheLine - 32]byte
}
