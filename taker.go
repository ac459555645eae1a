package shoal

import (
	"runtime"
	"slices"
	"sync/atomic"
)

// takerWindows are the frame counts takerStack tries in turn. Walking the
// stack costs by the frame, so it first takes the one frame above the
// pool's entry, which is the taker when a program calls Acquire itself,
// then enough to pass Do, the pool's own waiting frames and an adapter's,
// and only then as many as a leak report keeps.
var takerWindows = [...]int{1, 8, len(leakInfo{}.pcs)}

// takerStack is how a pool with a tracing Observer (and no LeakThreshold)
// names the code that takes each lease: it fills pcs with the acquiring
// goroutine's frames, leaving out skip frames above its caller, as far as
// the first one of the code that called the pool (isCaller) and no
// further, and returns how many it filled. Reading function names waits
// until someone asks (acquiredBy); here only a cached verdict per program
// counter is read. Unless near says the caller is likely the first frame,
// it starts with the second window.
func takerStack(pcs []uintptr, skip int, near bool) int {
	windows := takerWindows[:]
	if !near {
		windows = windows[1:]
	}
	for _, w := range windows {
		w = min(w, len(pcs))
		n := runtime.Callers(skip+2, pcs[:w]) // +2: runtime.Callers and takerStack
		if n < w || slices.ContainsFunc(pcs[:n], callerPC) {
			return n
		}
	}
	return len(pcs)
}

// callerVerdicts caches, for the program counters takerStack meets, whether
// each lies in the code that called the pool, so that a function's name is
// read once per call site rather than at every acquire. A slot holds
// pc<<1 | verdict for the last counter hashed to it (user-space addresses
// leave the top bit free); a collision costs a fresh look, never a wrong
// verdict.
var callerVerdicts [256]atomic.Uint64

// callerPC reports whether pc, a return address from runtime.Callers, lies
// in the code that called the pool.
func callerPC(pc uintptr) bool {
	key := uint64(pc) << 1
	slot := &callerVerdicts[(uint64(pc)*0x9E3779B97F4A7C15)>>56]
	if v := slot.Load(); v&^1 == key {
		return v&1 == 1
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	verdict := f.Function != "" && isCaller(f.Function)
	v := key
	if verdict {
		v |= 1
	}
	slot.Store(v)
	return verdict
}
