package shoalgrpc

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc"
)

// NewStream begins a streaming RPC on the least-loaded ready connection.
// The stream holds one stream slot until grpc-go considers it finished:
// RecvMsg returned an error (io.EOF included), a response arrived on a
// stream whose server does not stream (desc.ServerStreams false), SendMsg or
// Header failed, or ctx ended. As with grpc.ClientConn, a caller must do
// one of those things (canceling ctx is the simplest), or the stream and its
// slot stay taken; a stream that the caller drops without doing so is
// canceled when the garbage collector finds it, with no promise when.
// CloseSend alone ends nothing: it closes the caller's half, and the server
// may go on sending. The usual end of a client- or bidi-streaming call,
// CloseSend and then RecvMsg until io.EOF, frees the slot at the io.EOF; a
// caller that stops reading after CloseSend should cancel ctx.
// A stream that an interceptor given as a dial option makes up itself,
// without calling its streamer, holds no slot. One that such an
// interceptor wraps holds its slot, across every stream the interceptor
// opens for it (a retry), until the stream returned ends as above, or ctx
// ends, even when grpc-go finished the stream under it first.
// When no slot is free NewStream waits like Invoke. Options.StreamInterceptors
// run around all of it.
func (p *Pool) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if p.stream != nil {
		return p.stream(ctx, desc, nil, method, opts...)
	}
	return p.newStream(ctx, desc, nil, method, opts...)
}

// newStream is NewStream without the pool's interceptors, shaped as a
// grpc.Streamer for them to call.
func (p *Pool) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c := p.startCall()
	l, err := p.acquire(ctx, opts)
	if err != nil {
		defer c.end()
		if c.viaFailure {
			c.intoInterceptors()
			defer c.outOfInterceptors()
			return p.failStream(ctx, desc, method, withCall(opts, c), err)
		}
		return nil, err
	}
	slot := p.newStreamSlot(ctx, l, c)
	c.slot = slot
	c.intoInterceptors()
	returned := false
	defer func() {
		if !returned {
			// A dial option's interceptor panicked: no stream reaches the
			// caller, and the slot only ever comes back from NewStream's
			// return, so it comes back here (ending any stream opened).
			slot.release()
		}
	}()
	cs, err := l.Value().cc.NewStream(slot.ctx, desc, method, withCall(opts, c)...)
	returned = true
	c.outOfInterceptors()
	if err != nil {
		slot.release()
		return nil, err
	}
	if !slot.handedOut(cs) {
		// A dial option's interceptor answered without a stream of
		// grpc-go's (or without passing the call options on): nothing
		// holds the slot, and nothing would give it back.
		slot.release()
		return cs, nil
	}
	s := &stream{ClientStream: cs, slot: slot, serverStreams: desc.ServerStreams}
	// The cleanup must not reach s (it would keep s alive): it gets slot.
	runtime.AddCleanup(s, (*streamSlot).abandon, slot)
	return s, nil
}

// streamSlot is a stream's hold on its slot. Kept apart from stream so that
// what runs when the stream ends does not keep the stream reachable.
//
// The slot belongs to the call, the stream the caller holds, not to one
// stream of grpc-go's: an interceptor given as a dial option may open
// another stream for the call, on the same connection and context, after
// the first finished (a retry, in its RecvMsg). So the slot is given back
// when the caller's stream ends (stream's RecvMsg and SendMsg), or once no
// stream of grpc-go's is open for the call and none can come: the context
// ended (the caller's, or the pool's cancel at Close or when the caller
// dropped the stream), or the caller holds grpc-go's stream itself, with
// nothing between that could open another.
type streamSlot struct {
	lease shoal.Lease[*conn]
	call  *call // counted out when the slot is given back
	// ctx is the context of the call's streams: the caller's, canceled
	// by the pool too once the slot is given back, when the caller drops
	// the stream, and at Close.
	ctx    context.Context
	cancel context.CancelFunc

	mu sync.Mutex
	// running is how many streams grpc-go made for the call and has not
	// finished (or is making).
	running int
	made    bool              // grpc-go made a stream for the call
	last    grpc.ClientStream // the latest stream made, until handed out
	handed  bool              // NewStream returned the call's stream
	own     bool              // the caller holds grpc-go's stream itself
	done    bool              // the slot was given back
	stops   [2]func() bool    // the context.AfterFuncs below
}

// newStreamSlot returns the hold on the slot l for c, with its context.
func (p *Pool) newStreamSlot(ctx context.Context, l shoal.Lease[*conn], c *call) *streamSlot {
	sctx, cancel := context.WithCancel(ctx)
	s := &streamSlot{lease: l, call: c, ctx: sctx, cancel: cancel}
	// Under the lock: a context already ended runs ctxEnded at once,
	// which must find stops set.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = [2]func() bool{
		context.AfterFunc(sctx, s.ctxEnded),
		context.AfterFunc(p.streamsCtx, cancel),
	}
	return s
}

// open makes one of the call's streams, for the pool's innermost
// interceptor. grpc-go calls OnFinish once when a stream it made finishes,
// for whatever reason, including ctx ending and the connection closing: the
// one signal that covers every way a stream ends. (The stream's Context
// would tell too, but asking for it commits the stream to its first
// attempt, and grpc-go would no longer retry it.) Each stream gets an
// OnFinish of its own, as grpc-go calls none for some streams it fails to
// make.
func (s *streamSlot) open(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts []grpc.CallOption) (grpc.ClientStream, error) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	finished := sync.OnceFunc(s.finished)
	opts = append(opts[:len(opts):len(opts)], grpc.OnFinish(func(error) { finished() }))
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		finished()
		return cs, err
	}
	s.mu.Lock()
	s.made, s.last = true, cs
	s.mu.Unlock()
	return cs, nil
}

// finished counts one of the call's streams out.
func (s *streamSlot) finished() {
	s.mu.Lock()
	s.running--
	end := s.idleForGood()
	s.mu.Unlock()
	if end {
		s.release()
	}
}

// ctxEnded runs when the streams' context ends; a stream still open
// finishes with it and gives the slot back then.
func (s *streamSlot) ctxEnded() {
	s.mu.Lock()
	end := s.idleForGood()
	s.mu.Unlock()
	if end {
		s.release()
	}
}

// handedOut notes that NewStream returns cs to the caller and reports
// whether grpc-go made a stream for the call. A stream that finished
// already gives the slot back here when no other can come.
func (s *streamSlot) handedOut(cs grpc.ClientStream) bool {
	s.mu.Lock()
	made := s.made
	// s.last is grpc-go's own stream, a pointer: comparing cannot panic.
	s.own = made && cs == s.last
	s.last = nil
	s.handed = true
	end := made && s.idleForGood()
	s.mu.Unlock()
	if end {
		s.release()
	}
	return made
}

// idleForGood reports, under s.mu, whether no stream of the call is open
// and none can come. While NewStream runs, its return decides.
func (s *streamSlot) idleForGood() bool {
	return s.handed && s.running == 0 && (s.own || s.ctx.Err() != nil)
}

// release gives the slot back, once. A lease must be released exactly once:
// the core hands the same Lease to the next caller, and a second Release
// would end that caller's hold.
func (s *streamSlot) release() {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	s.done = true
	s.mu.Unlock()
	for _, stop := range s.stops {
		stop()
	}
	s.lease.Release()
	s.call.end()
	s.cancel() // a stream still open, or a retry to come, ends here
}

// abandon runs when the caller's stream became unreachable: canceling its
// context makes grpc-go finish its streams, which releases the slot.
func (s *streamSlot) abandon() { s.cancel() }

// stream is a grpc.ClientStream that gives its slot back when it ends.
// Releasing in RecvMsg too, rather than only when grpc-go's context fires,
// frees the slot before RecvMsg returns, so a caller that opens its next
// stream right away finds it free.
type stream struct {
	grpc.ClientStream
	slot          *streamSlot
	serverStreams bool
}

// RecvMsg receives a message; after an error, or the one response of a
// stream whose server does not stream, the stream's slot is free again.
func (s *stream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil || !s.serverStreams {
		s.slot.release()
	}
	return err
}

// SendMsg sends a message; an error other than io.EOF ends the stream and
// frees its slot (io.EOF means the status is still to be read by RecvMsg).
func (s *stream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		s.slot.release()
	}
	return err
}
