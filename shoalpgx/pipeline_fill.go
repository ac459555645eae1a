package shoalpgx

import (
	"sync/atomic"
	"time"
)

// Filling a shared connection before spreading (Config.PipelineFill). Each
// request written to a connection waits, at the server, for those ahead of
// it; what it costs the client and the server, though, is mostly per write
// and per read, and requests queued on one connection share those. So a
// new statement goes to the busiest connection that would still answer it
// within PipelineFill, judged by the pace at which it has been answering,
// and spreads only when none would. The reader measures that pace: the
// time from a request's turn at the server (its write, or the answer to
// the one before it, whichever came later) to its own answer.

// pipeLoad is the shared pool's load as fill weighs it: the callers with a
// statement under way (in pipePool.run) and the connections open.
type pipeLoad struct {
	callers atomic.Int64
	conns   atomic.Int64
}

// pipePace is what a shared connection's reader measures of its server.
type pipePace struct {
	each   atomic.Int64 // moving average of a request's time at the server, ns; 0 before the first answer
	turnAt atomic.Int64 // pipeClock when the oldest request at the server began its turn
	// atServer counts requests written and not yet answered, as
	// len(pending)-len(queue) would, but without c.mu, which fill, called
	// under the core pool's lock, does not take.
	atServer atomic.Int32
	lastAt   int64 // pipeClock of the last answer; the reader's alone
}

// paceWeight is the weight of the newest measure in each's average, as a
// shift: 1/8, so that one odd request moves it little and a change of
// workload shows within a few dozen.
const paceWeight = 3

// pipeEpoch and pipeClock: a monotonic clock in nanoseconds that fits an
// atomic.Int64.
var pipeEpoch = time.Now()

func pipeClock() int64 { return int64(time.Since(pipeEpoch)) }

// written notes requests about to be written: their turn may start now.
// Only the writer calls it.
func (pc *pipePace) written(out []*pipeReq) {
	now := pipeClock()
	for _, r := range out {
		r.sentAt.Store(now)
	}
	if pc.atServer.Add(int32(len(out))) == int32(len(out)) {
		pc.turnAt.Store(now) // the server had nothing of ours in hand
	}
}

// unwritten takes back what written noted for requests that never left.
func (pc *pipePace) unwritten(out []*pipeReq) {
	pc.atServer.Add(-int32(len(out)))
}

// answered notes r's answer. Only the reader calls it. A statement's
// preparation (onDone) is no caller's statement: the pace is the callers'.
func (pc *pipePace) answered(r *pipeReq) {
	sentAt := r.sentAt.Load()
	if sentAt == 0 {
		return
	}
	now := pipeClock()
	took := now - max(pc.lastAt, sentAt)
	pc.lastAt = now
	if r.onDone == nil {
		if e := pc.each.Load(); e == 0 {
			pc.each.Store(took)
		} else {
			pc.each.Store(e + (took-e)>>paceWeight)
		}
	}
	pc.turnAt.Store(now)
	pc.atServer.Add(-1)
}

// fill is the shared pool's shoal.Config.Fill: whether c, carrying streams
// statements, takes one more before a less-loaded connection. It does when
// the pool has more callers than connections open (with no more, each
// caller can have a connection to itself, and a statement filled in
// behind another would only wait for it, while the server's other
// backends sat idle), all of c's statements, at c's pace, would be
// answered within PipelineFill, and c's
// oldest statement at the server has not been there longer than
// PipelineFill (a slow statement, which the statements behind it would
// wait for). The time at the server is as the reader sees it, so on a
// busy client it holds the reader's wait to be scheduled. That is why the
// bound is PipelineFill and not a few times the pace: the reader's wait
// alone would often pass that, and turn callers away to idle connections,
// each a write of one statement.
func (pp *pipePool) fill(c *pipeConn, streams int) bool {
	if pp.load.callers.Load() <= pp.load.conns.Load() {
		return false
	}
	each := c.pace.each.Load()
	if each <= 0 || int64(streams+1)*each > int64(pp.p.config.PipelineFill) {
		return false
	}
	return !pp.stalled(c)
}

// stalled is the shared pool's shoal.Config.Avoid: whether c's oldest
// statement at the server has been there longer than PipelineFill (a slow
// statement), so that a new one would wait behind it. Such a connection
// is neither filled nor, while another has room, given a new statement.
func (pp *pipePool) stalled(c *pipeConn) bool {
	return c.pace.atServer.Load() > 0 && pipeClock()-c.pace.turnAt.Load() > int64(pp.p.config.PipelineFill)
}
