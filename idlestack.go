package shoal

import "sync/atomic"

// idleStack is a lock-free LIFO (a Treiber stack) of connection slot numbers.
//
// The head packs a 32-bit tag above the top slot number plus one (0 = empty).
// Every push and pop bumps the tag, so a pop that read head A, then slept
// while others popped A, popped B and pushed A back, fails its
// compare-and-swap instead of installing B, which is no longer idle: the
// classic ABA hazard. Wrapping the tag takes 2^32 operations inside one
// pop's read-to-CAS window, which does not happen.
//
// The links live in the pool's slot table, one per slot: a slot is on at
// most one stack at a time, and only the goroutine that owns it (it popped
// or is pushing it) writes its link.
type idleStack[T any] struct {
	head atomic.Uint64
}

const emptyTop = 0

func (s *idleStack[T]) push(t *slotTable[T], slot int32) {
	link := &t.entry(slot).next
	for {
		old := s.head.Load()
		link.Store(uint32(old))
		tag := old>>32 + 1
		if s.head.CompareAndSwap(old, tag<<32|uint64(slot+1)) {
			return
		}
	}
}

// pop takes the top slot off the stack and returns its connection, or nil
// when the stack is empty.
func (s *idleStack[T]) pop(t *slotTable[T]) *conn[T] {
	for {
		old := s.head.Load()
		top := uint32(old)
		if top == emptyTop {
			return nil
		}
		e := t.entry(int32(top - 1))
		below := e.next.Load()
		tag := old>>32 + 1
		if s.head.CompareAndSwap(old, tag<<32|uint64(below)) {
			return e.conn.Load()
		}
	}
}

// empty reports whether the stack looked empty at the moment of the load.
func (s *idleStack[T]) empty() bool { return uint32(s.head.Load()) == emptyTop }
