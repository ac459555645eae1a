package shoal

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"
)

// LeakReport describes a lease held past Config.LeakThreshold.
type LeakReport struct {
	Held      time.Duration // how long it had been held when reported
	Function  string        // the function that acquired it: the first caller outside shoal
	Stack     string        // the acquiring goroutine's stack at Acquire, one frame per line
	Reclaimed bool          // LeakReclaim took the connection back
}

// leakInfo is the acquire-time stack of one lease, kept with the lease and
// overwritten at each hand-out so that capturing it allocates nothing.
type leakInfo struct {
	mu       sync.Mutex
	gen      uint64 // the lease state (generation) the stack belongs to
	pcs      [32]uintptr
	n        int
	reported uint64 // generation already reported
}

// scanLeaks reports (and with LeakReclaim takes back) leases held past
// LeakThreshold. It runs in the maintenance goroutine.
func (p *Pool[T]) scanLeaks(now int64) {
	threshold := int64(p.cfg.LeakThreshold)
	if threshold == 0 {
		return
	}
	for _, l := range p.eng.heldLeases() {
		p.checkLeak(l, now, threshold)
	}
}

// checkLeak judges one lease. The hand-out generation in its state ties the
// acquire time and stack to the hand-out being judged: if the lease changed
// hands in the meantime, the state differs and nothing happens.
func (p *Pool[T]) checkLeak(l *leaseRecord[T], now, threshold int64) {
	s := l.state.Load()
	if s&heldBit == 0 {
		return
	}
	at := l.acquiredAt.Load()
	if l.state.Load() != s || at == 0 || now-at < threshold {
		return
	}
	li := l.leak
	li.mu.Lock()
	if li.reported == s {
		li.mu.Unlock()
		return
	}
	li.reported = s
	var fn, stack string
	if li.gen == s {
		fn, stack = formatStack(li.pcs[:li.n])
	}
	li.mu.Unlock()

	report := LeakReport{Held: time.Duration(now - at), Function: fn, Stack: stack}
	if p.cfg.LeakReclaim && l.state.CompareAndSwap(s, s&^heldBit) {
		l.reclaimed.Store(true)
		report.Reclaimed = true
		p.release(l, ReasonLeaked)
	}
	p.counters.leaked.Add(1)
	if p.logEnabled(slog.LevelWarn) {
		p.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "shoal: lease held past LeakThreshold",
			slog.Duration("held", report.Held), slog.Duration("threshold", p.cfg.LeakThreshold),
			slog.String("acquired_by", report.Function), slog.Bool("reclaimed", report.Reclaimed),
			slog.String("stack", report.Stack))
	}
	if p.obs != nil {
		p.obs.ObserveLeak(report)
	}
}

// acquiredBy returns the function that acquired l's current hand-out, from
// the stack kept for leak reports or the frames kept with tracing
// (takerStack), or "" when none are kept or they belong to another
// hand-out.
func (l *leaseRecord[T]) acquiredBy() string {
	li := l.leak
	if li == nil {
		return ""
	}
	li.mu.Lock()
	defer li.mu.Unlock()
	if li.gen != l.state.Load() {
		return ""
	}
	fn, _ := formatStack(li.pcs[:li.n])
	return fn
}

// formatStack renders the frames of an acquire, leaving out the pool's own,
// and returns the first caller outside the pool, its adapters
// (github.com/shoalpool/shoal/shoalpgx and the like) and net/http's client
// (which calls shoalhttp's RoundTrip): the code that holds the lease.
func formatStack(pcs []uintptr) (first, stack string) {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, corePrefix) {
			if first == "" && isCaller(f.Function) {
				first = f.Function
			}
			fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	return first, b.String()
}

// corePrefix begins the name of every function of the core package.
const corePrefix = "github.com/shoalpool/shoal."

// isCaller reports whether a function is the code that called the pool:
// not the pool's own, not an adapter's, and not net/http's client (which
// calls shoalhttp's RoundTrip).
func isCaller(function string) bool {
	return !strings.HasPrefix(function, corePrefix) && !inAdapter(function) &&
		!strings.HasPrefix(function, "net/http.")
}

// inAdapter reports whether a function belongs to one of the module's own
// packages below the core (shoalpgx, internal/peek and the like), but not
// to their external tests (package shoalhttp_test), which call the pool
// as a program does.
func inAdapter(function string) bool {
	rest, ok := strings.CutPrefix(function, "github.com/shoalpool/shoal/")
	if !ok {
		return false
	}
	pkg, _, _ := strings.Cut(rest, ".") // package paths here hold no dot
	return !strings.HasSuffix(pkg, "_test")
}
