package shoalgrpc

// enter counts a call in, from its start until it has its stream slot or
// has been failed. It reports false once Close has begun: such a call is
// failed without the failure channel, as grpc-go emits nothing for a call
// made after its Close. Atomics, not a lock: every call passes here.
func (p *Pool) enter() bool {
	p.calls.Add(1)
	if p.closing.Load() {
		p.leave()
		return false
	}
	return true
}

// leave counts a call out, and tells a waiting Close when it was the last.
func (p *Pool) leave() {
	if p.calls.Add(-1) == 0 && p.closing.Load() {
		select {
		case p.callsOut <- struct{}{}:
		default: // a signal is pending already; Close counts again
		}
	}
}

// waitCallsOut waits, once closing is set, until every call counted in has
// left. A call that enters now sees closing and leaves at once.
func (p *Pool) waitCallsOut() {
	for p.calls.Load() > 0 {
		<-p.callsOut
	}
}
