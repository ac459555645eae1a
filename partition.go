package shoal

import "sync/atomic"

// cacheLine is the size we pad hot structures to. 128 rather than 64 because
// x86 prefetches cache lines in adjacent pairs, and ARM64 servers often have
// 128-byte lines.
const cacheLine = 128

// partition is one of the pool's idle stacks with the counter that the
// goroutines popping from it update. Each sits on its own cache lines, so
// cores working on different partitions do not invalidate each other.
type partition struct {
	idle     idleStack
	acquires atomic.Int64 // acquires served from this partition without waiting
	_        [cacheLine - 16]byte
}
