package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/internal/embedded"
)

// closeTimeout bounds closing a case's pool or transport.
const closeTimeout = 10 * time.Second

// linePool is a shoal pool of connections to the embedded line server.
type linePool = shoal.Pool[*embedded.LineConn]

// newLinePool opens a pool of maxConns connections to the line server in
// partitions partitions (0: the pool's choice) and waits until all are
// open, so that the measurement does not include the dials.
// With a bank, connections come from it and go back to it.
func newLinePool(ctx context.Context, e *env, maxConns, partitions int, work time.Duration, bank *lineBank) (*linePool, *benchrun.WaitObserver, error) {
	addr, tlsCfg := e.servers.Line.Addr(), e.servers.Cert.ClientTLS()
	dial := func(ctx context.Context) (*embedded.LineConn, error) {
		return embedded.DialLine(ctx, addr, tlsCfg, work)
	}
	closeConn := (*embedded.LineConn).Close
	if bank != nil {
		dial, closeConn = bank.dial, bank.put
	}
	waits := &benchrun.WaitObserver{}
	p, err := shoal.New(shoal.Config[*embedded.LineConn]{
		Dial:        dial,
		Close:       closeConn,
		MaxConns:    maxConns,
		MinIdle:     maxConns,
		Partitions:  partitions,
		DialTimeout: e.dialTimeout,
		Observer:    waits, // the wait percentiles reported come from the pool itself
	})
	if err != nil {
		return nil, nil, err
	}
	if err := p.Warm(ctx); err != nil {
		closePool(p)
		return nil, nil, err
	}
	return p, waits, nil
}

// closePool closes p, bounded by closeTimeout.
func closePool[T any](p *shoal.Pool[T]) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return p.Close(ctx)
}

// pooledLineInstance runs one request per operation on a pooled connection.
// The acquire-wait percentiles come from the pool's observer (waits); the
// operation's own timing of Acquire is the fallback.
func pooledLineInstance(p *linePool, waits *benchrun.WaitObserver) *benchrun.Instance {
	return &benchrun.Instance{
		Op: func(ctx context.Context) (time.Duration, error) {
			t0 := time.Now()
			lease, err := p.Acquire(ctx)
			wait := time.Since(t0)
			if err != nil {
				return wait, err
			}
			if err := lease.Value().Do(ctx); err != nil {
				lease.Discard()
				return wait, err
			}
			lease.Release()
			return wait, nil
		},
		ConnsOpened: func() int64 { return p.Stats().Dials },
		Close:       func() error { return closePool(p) },
		Waits:       waits,
	}
}

// newConnLineInstance dials a new connection for every request and closes
// it after, as a client without a pool does.
func newConnLineInstance(e *env, work time.Duration) *benchrun.Instance {
	addr, tlsCfg := e.servers.Line.Addr(), e.servers.Cert.ClientTLS()
	var opened atomic.Int64
	return &benchrun.Instance{
		Op: func(ctx context.Context) (time.Duration, error) {
			dctx, cancel := context.WithTimeout(ctx, e.dialTimeout)
			c, err := embedded.DialLine(dctx, addr, tlsCfg, work)
			cancel()
			if err != nil {
				return 0, err
			}
			opened.Add(1)
			err = c.Do(ctx)
			c.Close()
			return 0, err
		},
		ConnsOpened: opened.Load,
	}
}
