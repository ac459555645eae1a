package shoal

import (
	"sync/atomic"
	"unsafe"
)

// exclusiveEngine is the exclusive mode (MaxStreams of 0 or 1): the open
// connections by slot, and the idle ones on lock-free stacks in partitions,
// each connection handed to one holder at a time. Its reads are the fast
// path's: no lock, no allocation. This file holds its state and stacks;
// exclusivemode.go its side of the engine interface.
type exclusiveEngine[T any] struct {
	p        *Pool[T]
	parts    []partition[T] // idle stacks, one per partition
	slots    slotTable[T]   // open connections, by slot
	nextPart atomic.Uint32  // round-robin home partition for new conns
}

// popIdle pops an idle connection, trying the caller's home partition first
// and then stealing from the others, or returns nil.
func (e *exclusiveEngine[T]) popIdle() *conn[T] {
	n := uint32(len(e.parts))
	home := uint32(0)
	if n > 1 {
		home = homePartition(n)
	}
	for i := uint32(0); i < n; i++ {
		part := &e.parts[(home+i)%n]
		if part.idle.empty() {
			continue
		}
		if c := part.idle.pop(&e.slots); c != nil {
			return c
		}
	}
	return nil
}

// homePartition picks the caller's home partition in [0, n) from the
// address of a variable on its stack. Each goroutine has its own stack, so
// goroutines spread over the partitions, and one goroutine keeps coming
// back to the same partition (until its stack moves), which keeps the lines
// it touches in its core's cache. It costs a multiplication, where a random
// draw measured a quarter of the uncontended acquire+release (BENCHMARKS.md)
// and any shared counter would be contended.
func homePartition(n uint32) uint32 {
	var marker byte
	addr := uint64(uintptr(unsafe.Pointer(&marker)))
	// Stacks are at least 2KiB apart: drop the bits within one, then
	// Fibonacci-hash the rest so neighbouring stacks land far apart.
	h := (addr >> 11) * 0x9E3779B97F4A7C15
	return uint32((h >> 32) * uint64(n) >> 32) // [0, n) without a division
}

// push puts c, which nobody holds, on its home partition's idle stack.
func (e *exclusiveEngine[T]) push(c *conn[T]) {
	c.lease.free()
	e.parts[c.part].idle.push(&e.slots, c.slot)
}

// place gives a new connection its slot and home partition, round robin.
func (e *exclusiveEngine[T]) place(c *conn[T]) {
	c.part = int32((e.nextPart.Add(1) - 1) % uint32(len(e.parts)))
	e.slots.put(c)
}

// popAll takes every connection off partition part's idle stack, top
// first.
func (e *exclusiveEngine[T]) popAll(part int) []*conn[T] {
	var popped []*conn[T]
	for {
		c := e.parts[part].idle.pop(&e.slots)
		if c == nil {
			return popped
		}
		popped = append(popped, c)
	}
}

// anyIdle reports whether partition part has an idle connection for which
// pred holds, looking at the slot table, not the stack: maintenance asks it
// before emptying a stack, which makes the partition's acquirers steal or
// wait.
func (e *exclusiveEngine[T]) anyIdle(part int, pred func(c *conn[T]) bool) bool {
	found := false
	e.slots.each(func(c *conn[T]) bool {
		found = int(c.part) == part && !c.lease.isHeld() && pred(c)
		return !found
	})
	return found
}

// tally returns the hand-outs of the open connections' leases, and how
// many of them are leased and idle.
func (e *exclusiveEngine[T]) tally() (handouts int64, inUse, idle int) {
	e.slots.each(func(c *conn[T]) bool {
		handouts += c.lease.handouts()
		if c.lease.isHeld() {
			inUse++
		} else {
			idle++
		}
		return true
	})
	return handouts, inUse, idle
}
