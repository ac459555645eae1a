package shoal

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// tableBuckets is how many buckets a slotTable can have: bucket k holds 2^k
// slots, so 31 of them number 2^31-1, maxConnsLimit.
const tableBuckets = 31

// slotTable numbers the open connections of an exclusive pool. Slot i holds
// a connection and, while that connection is idle, its link on its
// partition's idle stack. It grows a bucket at a time as connections open,
// and a bucket never moves once made, so the lock-free idle stacks read it
// without a lock while a dial adds a bucket, and a pool whose MaxConns grows
// (SetMaxConns) or is set high allocates only for what it opens.
type slotTable[T any] struct {
	// buckets[k] points at the first of bucket k's 2^k entries: entry
	// reaches slot i with one load and an offset, with no slice header
	// between (the fast path pays for every load it adds).
	buckets [tableBuckets]atomic.Pointer[slotEntry[T]]
	size    atomic.Int32 // slots in the buckets made so far

	mu   sync.Mutex
	free []int32 // slot numbers not in use; guarded by mu
}

// slotEntry is one slot: its connection (nil when the slot is free) and its
// idle-stack link, the slot number plus one of the entry below it (0 at the
// bottom). Only the goroutine that owns the slot writes its link.
type slotEntry[T any] struct {
	conn atomic.Pointer[conn[T]]
	next atomic.Uint32
}

// entry returns slot i's entry; i must be below t.size. Slot i lives in
// bucket k = floor(log2(i+1)), at i+1-2^k.
func (t *slotTable[T]) entry(i int32) *slotEntry[T] {
	n := uint32(i) + 1
	k := bits.Len32(n) - 1
	off := uintptr(n - 1<<k)
	// In bounds by construction: bucket k has 2^k entries and off < 2^k.
	return (*slotEntry[T])(unsafe.Add(unsafe.Pointer(t.buckets[k].Load()), off*unsafe.Sizeof(slotEntry[T]{})))
}

// get returns the connection in slot i, or nil.
func (t *slotTable[T]) get(i int32) *conn[T] { return t.entry(i).conn.Load() }

// put gives c a free slot, making a bucket when none is left, and stores it
// there.
func (t *slotTable[T]) put(c *conn[T]) {
	t.mu.Lock()
	if len(t.free) == 0 {
		t.growLocked()
	}
	c.slot = t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	t.mu.Unlock()
	t.entry(c.slot).conn.Store(c)
}

// growLocked makes the next bucket and frees its slots, lowest on top, so
// that a pool fills its slots from 0 up. t.mu must be held.
func (t *slotTable[T]) growLocked() {
	size := t.size.Load()
	k := bits.Len32(uint32(size)+1) - 1
	bucket := make([]slotEntry[T], 1<<k)
	t.buckets[k].Store(&bucket[0])
	for i := size + int32(len(bucket)) - 1; i >= size; i-- {
		t.free = append(t.free, i)
	}
	t.size.Store(size + int32(len(bucket)))
}

// forget empties c's slot and frees its number.
func (t *slotTable[T]) forget(c *conn[T]) {
	t.entry(c.slot).conn.Store(nil)
	t.mu.Lock()
	t.free = append(t.free, c.slot)
	t.mu.Unlock()
}

// each calls fn with every connection in the table at the moment its slot
// is read, stopping early when fn returns false.
func (t *slotTable[T]) each(fn func(c *conn[T]) bool) {
	size := t.size.Load()
	for i := int32(0); i < size; i++ {
		if c := t.get(i); c != nil && !fn(c) {
			return
		}
	}
}
