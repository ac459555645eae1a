package shoal

import (
	"sync"
	"testing"
)

func TestIdleStackIsLIFOAndEmpties(t *testing.T) {
	var tab slotTable[int]
	var s idleStack[int]
	if !s.empty() || s.pop(&tab) != nil {
		t.Fatal("a new stack is not empty")
	}
	var conns []*conn[int]
	for i := range 5 {
		c := &conn[int]{value: i}
		tab.put(c)
		conns = append(conns, c)
		s.push(&tab, c.slot)
	}
	for i := 4; i >= 0; i-- {
		if c := s.pop(&tab); c != conns[i] {
			t.Fatalf("pop %d: got %v, want connection %d", 4-i, c, i)
		}
	}
	if !s.empty() || s.pop(&tab) != nil {
		t.Fatal("the stack is not empty after popping everything")
	}
}

// TestIdleStackNeverHandsASlotToTwo pops and pushes from many goroutines:
// a slot is owned by whoever popped it until they push it back, so no two
// goroutines may hold one at once, and none is lost.
func TestIdleStackNeverHandsASlotToTwo(t *testing.T) {
	var tab slotTable[int]
	var s idleStack[int]
	const slots = 8
	owners := make([]sync.Mutex, slots)
	for i := range slots {
		c := &conn[int]{value: i}
		tab.put(c)
		s.push(&tab, c.slot)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20000 {
				c := s.pop(&tab)
				if c == nil {
					continue
				}
				if !owners[c.slot].TryLock() {
					t.Errorf("slot %d popped while another goroutine held it", c.slot)
					return
				}
				owners[c.slot].Unlock()
				s.push(&tab, c.slot)
			}
		})
	}
	wg.Wait()
	n := 0
	for s.pop(&tab) != nil {
		n++
	}
	if n != slots {
		t.Fatalf("%d slots left on the stack, want %d", n, slots)
	}
}
