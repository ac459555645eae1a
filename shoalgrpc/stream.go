package shoalgrpc

import (
	"context"
	"io"
	"runtime"
	"sync/atomic"

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
// without calling its streamer, holds no slot.
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
	// A context of the pool's own lets an abandoned stream be canceled.
	sctx, cancel := context.WithCancel(ctx)
	slot := &streamSlot{lease: l, call: c, cancel: cancel}
	// grpc-go calls OnFinish once when the stream finishes, for whatever
	// reason, including ctx ending and the connection closing: the one
	// signal that covers every way a stream ends. (The stream's Context
	// would tell too, but asking for it commits the stream to its first
	// attempt, and grpc-go would no longer retry it.) The options are
	// copied so that the caller's slice is not appended to.
	opts = append(withCall(opts, c), grpc.OnFinish(func(error) { slot.release() }))
	c.intoInterceptors()
	cs, err := l.Value().cc.NewStream(sctx, desc, method, opts...)
	c.outOfInterceptors()
	if err != nil {
		slot.release()
		return nil, err
	}
	if !c.madeStream() {
		// A dial option's interceptor answered without a stream of
		// grpc-go's (or without passing the call options on, OnFinish
		// among them): nothing holds the slot, and nothing would give it
		// back.
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
type streamSlot struct {
	lease    shoal.Lease[*conn]
	call     *call // counted out when the slot is given back
	cancel   context.CancelFunc
	released atomic.Bool
}

// release gives the slot back, once. A lease must be released exactly once:
// the core hands the same Lease to the next caller, and a second Release
// would end that caller's hold.
func (s *streamSlot) release() {
	if s.released.CompareAndSwap(false, true) {
		s.lease.Release()
		s.call.end()
		s.cancel() // frees the context; the stream is over already
	}
}

// abandon runs when the caller's stream became unreachable: canceling it
// makes grpc-go finish it, which releases the slot.
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
