package shoalgrpc

import (
	"google.golang.org/grpc/connectivity"
)

// Target returns the target the pool dials, as grpc.ClientConn.Target does,
// but with any credentials in it (a user:password@ in a URL target)
// removed: a target is often logged, and the pool never shows a password.
func (p *Pool) Target() string { return p.shownTarget }

// GetState returns the pool's connectivity state, in grpc.ClientConn's
// terms, over all its connections:
//
//   - Shutdown once the pool is closed;
//   - Ready when any connection is READY;
//   - Connecting when a connection is connecting or a dial is in flight;
//   - TransientFailure when the last dial failed, or the connections are
//     all failing;
//   - Idle otherwise: nothing open and nothing tried yet (the first call or
//     Connect dials), or the open connections gone idle.
func (p *Pool) GetState() connectivity.State {
	if p.closed.Load() {
		return connectivity.Shutdown
	}
	var ready, connecting, failing bool
	p.mu.Lock()
	for c := range p.conns {
		switch c.cc.GetState() {
		case connectivity.Ready:
			ready = true
		case connectivity.Connecting:
			connecting = true
		case connectivity.TransientFailure:
			failing = true
		}
	}
	p.mu.Unlock()
	switch {
	case ready:
		return connectivity.Ready
	case connecting || p.pool.Stats().Dialing > 0:
		return connectivity.Connecting
	case failing || p.lastDialFailed.Load():
		return connectivity.TransientFailure
	}
	return connectivity.Idle
}

// Connect makes an idle pool connect, as grpc.ClientConn.Connect does, and
// returns without waiting: every open connection that has gone idle starts
// connecting, and with none open and no dial in flight the pool dials one
// in the background (within MaxConns), so that the first call finds it
// ready. It does nothing on a closed pool.
func (p *Pool) Connect() {
	if p.closed.Load() {
		return
	}
	p.mu.Lock()
	open := len(p.conns)
	for c := range p.conns {
		c.cc.Connect()
	}
	p.mu.Unlock()
	if open == 0 && p.pool.Stats().Dialing == 0 {
		// Finds nothing idle and starts a dial; an idle connection that
		// appeared meanwhile is given straight back.
		if l, err := p.pool.TryAcquire(); err == nil {
			l.Release()
		}
	}
}
