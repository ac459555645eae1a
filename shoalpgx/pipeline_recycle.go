package shoalpgx

// Reusing requests. A pipelined statement's request, with its buffers and
// the channel that wakes its caller, is most of what the statement
// allocates; an Exec as it returns, and a Query or QueryRow once its rows
// close, give theirs back for the next statement. Only a request the
// reader answered whole comes back: one whose caller gave up may still be
// read into, one whose connection broke may still be in a writer's or
// reader's hands, and a batch's results keep pointing into theirs.
//
// Each pool keeps its own (pipePool.reqs): a request holds a channel,
// which under testing/synctest belongs to the bubble that made it, so a
// pool made in one test's bubble must never hand its requests to another.

// keptBuf is the largest message buffer a request given back keeps: one
// grown by a rare long statement goes with it rather than stay pinned.
const keptBuf = 4 << 10

// getReq returns a request for one statement, a reused one when there is
// one.
func (pp *pipePool) getReq() *pipeReq {
	if r, ok := pp.reqs.Get().(*pipeReq); ok {
		return r
	}
	r := newPipeReq(1)
	r.home = &pp.reqs
	return r
}

// recycle gives r back for reuse, when its answer is in whole and its
// caller has read what it wanted of it: nobody else can reach it then.
// Others are left to the garbage collector.
func (r *pipeReq) recycle() {
	if r.home == nil || r.err != nil || r.onDone != nil || r.state.Load() != reqDone || len(r.res) != 1 || cap(r.buf) > keptBuf {
		return
	}
	ready, buf, home := r.ready, r.buf[:0], r.home
	*r = pipeReq{ready: ready, buf: buf, home: home}
	r.res = r.one[:]
	home.Put(r)
}
