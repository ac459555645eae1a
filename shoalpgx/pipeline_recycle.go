package shoalpgx

import "sync"

// Reusing requests. A pipelined statement's request, with its buffers and
// the channel that wakes its caller, is most of what the statement
// allocates; an Exec as it returns, and a Query or QueryRow once its rows
// close, give theirs back for the next statement. Only a request the
// reader answered whole comes back: one whose caller gave up may still be
// read into, one whose connection broke may still be in a writer's or
// reader's hands, and a batch's results keep pointing into theirs.

// reqs holds requests given back, for getPipeReq.
var reqs = sync.Pool{New: func() any { return newPipeReq(1) }}

// keptBuf is the largest message buffer a request given back keeps: one
// grown by a rare long statement goes with it rather than stay pinned.
const keptBuf = 4 << 10

// getPipeReq returns a request for one statement, a reused one when there
// is one.
func getPipeReq() *pipeReq {
	return reqs.Get().(*pipeReq)
}

// recycle gives r back for reuse, when its answer is in whole and its
// caller has read what it wanted of it: nobody else can reach it then.
// Others are left to the garbage collector.
func (r *pipeReq) recycle() {
	if r.err != nil || r.onDone != nil || r.state.Load() != reqDone || len(r.res) != 1 || cap(r.buf) > keptBuf {
		return
	}
	ready, buf := r.ready, r.buf[:0]
	*r = pipeReq{ready: ready, buf: buf}
	r.res = r.one[:]
	reqs.Put(r)
}
