package shoal

import (
	"sync"
	"testing"
)

func TestSlotTableGrowsABucketAtATimeAndReusesNumbers(t *testing.T) {
	var tab slotTable[int]
	var conns []*conn[int]
	for i := range 100 {
		c := &conn[int]{value: i}
		tab.put(c)
		if c.slot != int32(i) {
			t.Fatalf("connection %d got slot %d: slots fill from 0 up", i, c.slot)
		}
		conns = append(conns, c)
	}
	// Buckets of 1, 2, 4, ..., 64 entries: 127 slots for 100 connections.
	if got := tab.size.Load(); got != 127 {
		t.Fatalf("size %d after 100 puts, want 127", got)
	}
	// Every slot is its own entry, and holds its own connection.
	seen := map[*slotEntry[int]]int32{}
	for i := int32(0); i < tab.size.Load(); i++ {
		e := tab.entry(i)
		if j, dup := seen[e]; dup {
			t.Fatalf("slots %d and %d share an entry", j, i)
		}
		seen[e] = i
	}
	for _, c := range conns {
		if tab.get(c.slot) != c {
			t.Fatalf("slot %d holds another connection", c.slot)
		}
	}
	// A freed number is the next one handed out; the table does not grow.
	tab.forget(conns[37])
	c := &conn[int]{}
	tab.put(c)
	if c.slot != 37 || tab.size.Load() != 127 {
		t.Fatalf("after forget and put: slot %d, size %d", c.slot, tab.size.Load())
	}
	n := 0
	tab.each(func(*conn[int]) bool { n++; return true })
	if n != 100 {
		t.Fatalf("each visited %d connections, want 100", n)
	}
}

func TestSlotTableGrowsWhileReadersRead(t *testing.T) {
	var tab slotTable[int]
	first := &conn[int]{value: -1}
	tab.put(first)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if tab.get(first.slot) != first {
					t.Error("a reader lost slot 0 while the table grew")
					return
				}
				tab.each(func(*conn[int]) bool { return true })
			}
		})
	}
	for i := range 5000 {
		tab.put(&conn[int]{value: i})
	}
	close(stop)
	wg.Wait()
}
