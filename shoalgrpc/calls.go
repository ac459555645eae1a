package shoalgrpc

import (
	"context"
	"sync"

	"google.golang.org/grpc"
)

// Close fails every call in the pool and closes every connection, then
// waits for the calls to end, which they do at once on a closed
// connection. It must not wait for the caller's code: an interceptor given
// as a dial option runs inside the call, on its connection, and may block
// (a rate limiter, a token fetch), where grpc.ClientConn.Close would not
// wait for it. So each call is followed: it counts in Pool.calls while it
// runs in the pool's code or grpc-go's, and not while it runs in the dial
// options' interceptors, which the pool marks with an interceptor of its
// own, innermost on every connection and on the failure channel. The call
// reaches that interceptor among its call options, which an interceptor
// passes on; there the pool also follows each stream grpc-go makes for the
// call (stream.go).

// call is one call's way through the pool, as Close sees it.
type call struct {
	p *Pool
	// viaFailure says that the call began before Close: a failure goes
	// through the failure channel, as grpc-go emits nothing for a call
	// made after its Close.
	viaFailure bool
	// slot is a stream's hold on its slot, which every stream grpc-go
	// makes for the call shares; nil for a unary call and on the failure
	// channel. Set before the call reaches grpc-go.
	slot *streamSlot

	mu sync.Mutex
	// intercepted is how many times the call went into the dial options'
	// interceptors less how many times it came out to grpc-go (which a
	// retrying interceptor may do more than once).
	intercepted int
	over        bool // the call has ended and given its slot back
}

// startCall counts a call in, from its start until it has ended.
func (p *Pool) startCall() *call {
	p.calls.Add(1)
	return &call{p: p, viaFailure: !p.closing.Load()}
}

// callOption carries a call to the pool's innermost interceptor.
type callOption struct {
	grpc.EmptyCallOption
	c *call
}

// withCall returns opts and c's callOption, in a slice of their own so
// that the caller's is not appended to.
func withCall(opts []grpc.CallOption, c *call) []grpc.CallOption {
	return append(opts[:len(opts):len(opts)], callOption{c: c})
}

// callIn returns the call opts carry, or nil when an interceptor did not
// pass them on.
func callIn(opts []grpc.CallOption) *call {
	for i := len(opts) - 1; i >= 0; i-- {
		if o, ok := opts[i].(callOption); ok {
			return o.c
		}
	}
	return nil
}

// counted reports, under c.mu, whether the call counts in Pool.calls.
func (c *call) counted() bool { return !c.over && c.intercepted <= 0 }

// update changes the call's state under its lock and counts it in or out.
func (c *call) update(change func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.counted()
	change()
	now := c.counted()
	if now && !was {
		c.p.calls.Add(1)
	} else if was && !now {
		c.p.leave()
	}
}

// intoInterceptors marks the call as handed to grpc-go, whose dial-option
// interceptors run first; outOfInterceptors marks it back.
func (c *call) intoInterceptors()  { c.update(func() { c.intercepted++ }) }
func (c *call) outOfInterceptors() { c.update(func() { c.intercepted-- }) }

// end counts the call out for good, once its slot is given back.
func (c *call) end() { c.update(func() { c.over = true }) }

// innermostUnary is the pool's interceptor, after the dial options' own:
// what runs inside it is grpc-go's.
func innermostUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if c := callIn(opts); c != nil {
		c.outOfInterceptors()
		defer c.intoInterceptors()
	}
	return invoke(ctx, method, req, reply, cc, opts...)
}

// innermostStream is innermostUnary for streams. It runs once for each
// stream grpc-go makes for the call: a retrying interceptor makes another
// after the first has finished, and the call's slot covers them all.
func innermostStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c := callIn(opts)
	if c == nil {
		return streamer(ctx, desc, cc, method, opts...)
	}
	c.outOfInterceptors()
	defer c.intoInterceptors()
	if c.slot == nil {
		return streamer(ctx, desc, cc, method, opts...)
	}
	return c.slot.open(ctx, desc, cc, method, streamer, opts)
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

// waitCallsOut waits, once closing is set and every connection is closed,
// until no call is left in the pool's code or grpc-go's.
func (p *Pool) waitCallsOut() {
	for p.calls.Load() > 0 {
		<-p.callsOut
	}
}
