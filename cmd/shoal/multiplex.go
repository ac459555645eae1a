package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/internal/embedded"
)

// multiplexWork is the simulated server time of one multiplexed request: a
// read that takes a while, so that streams stay open and the per-connection
// cap of 100 is what limits a single connection (to 100/100ms = 1,000
// requests a second), not the CPU.
const multiplexWork = 100 * time.Millisecond

// multiplexWorkers is the default concurrency: four times the streams one
// connection may carry, like the EventStoreDB benchmark's 100 tasks against
// Mint's cap.
const multiplexWorkers = 4 * embedded.MaxStreams

// multiplexScenario: one multiplexed connection against a pool of them.
var multiplexScenario = scenario{
	name:        "multiplex",
	description: "one multiplexed connection against a pool of them, the server capping streams at 100 per connection (as EventStoreDB's HTTP/2 client met it)",
	plan:        planMultiplex,
}

// targetMultiplexDescription is the multiplex scenario's heading against
// an HTTP/2 or gRPC server of the user's, which caps streams as it will.
const targetMultiplexDescription = "one multiplexed connection against a pool of them, each carrying as many streams as the server allows"

// connsFor is how many connections of maxStreams streams workers need.
func connsFor(workers, maxStreams int) int {
	return max((workers+maxStreams-1)/maxStreams, 2)
}

func planMultiplex(e *env) (*plan, error) {
	switch {
	case e.target == nil:
		return planMultiplexEmbedded(e), nil
	case e.target.Kind == targetHTTP && e.target.Scheme == "https":
		p := &plan{server: e.target.Redacted + " (HTTP/2)", description: targetMultiplexDescription}
		req := targetHTTPRequest(e.target)
		for _, workers := range e.workersOr(multiplexWorkers) {
			p.groups = append(p.groups, h2Group(e, req, e.target.HostPort, nil, workers))
		}
		return p, nil
	case e.target.Kind == targetPostgres:
		return planPipelinePostgres(e), nil
	case e.target.Kind == targetGRPC:
		p := &plan{server: e.target.Redacted + " (grpc.health.v1.Health/Check)", description: targetMultiplexDescription}
		var tlsCfg *tls.Config
		if e.target.Scheme == "grpcs" {
			tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		for _, workers := range e.workersOr(multiplexWorkers) {
			p.groups = append(p.groups, grpcGroup(e, e.target.HostPort, tlsCfg, workers))
		}
		return p, nil
	}
	return skipPlan("does not fit the " + e.target.Scheme + ":// target (it needs https:// with HTTP/2, grpc:// or postgres://)")
}

func planMultiplexEmbedded(e *env) *plan {
	p := &plan{server: fmt.Sprintf("embedded TLS HTTP/2 server %s (max %d streams per connection), %s",
		e.servers.HTTP.Addr(), embedded.MaxStreams, workNote(multiplexWork))}
	req := &httpRequest{url: e.servers.HTTP.WorkURL(multiplexWork)}
	tlsCfg := e.servers.Cert.ClientTLS()
	for _, workers := range e.workersOr(multiplexWorkers) {
		p.groups = append(p.groups, h2Group(e, req, e.servers.HTTP.Addr(), tlsCfg, workers))
	}
	if startGRPCServer != nil {
		for _, workers := range e.workersOr(multiplexWorkers) {
			p.groups = append(p.groups, grpcGroup(e, "", tlsCfg, workers))
		}
	} else {
		p.groups = append(p.groups, benchrun.Group{
			Title: "gRPC", Workers: multiplexWorkers,
			Cases: []benchrun.Case{{Name: "shoalgrpc", Skip: "gRPC variant: " + notLanded("shoalgrpc")}},
		})
	}
	return p
}

// h2Transport is a transport whose client connections speak HTTP/2 only.
func h2Transport(tlsCfg *tls.Config, dialTimeout time.Duration) (*http.Transport, *atomic.Int64) {
	t, n := countingTransport(http.DefaultTransport.(*http.Transport), tlsCfg, dialTimeout)
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP2(true)
	return t, n
}

// h2Group compares one HTTP/2 connection with a shoal pool of them, and
// with shoalhttp held to the same number of connections.
func h2Group(e *env, req *httpRequest, addr string, tlsCfg *tls.Config, workers int) benchrun.Group {
	conns := connsFor(workers, embedded.MaxStreams)
	viaShoalHTTP := shoalHTTPCase(req, tlsCfg, e.dialTimeout, conns)
	viaShoalHTTP.Name = fmt.Sprintf("shoalhttp_%d_conns", conns)
	viaShoalHTTP.Pool = &benchrun.PoolConfig{MaxConns: conns, MaxStreams: embedded.MaxStreams}
	return benchrun.Group{
		Title:   "HTTP/2, " + benchrun.Plural(workers, "worker"),
		Workers: workers,
		Cases: []benchrun.Case{
			{
				Name:   fmt.Sprintf("pool_of_%d_conns", conns),
				Pooled: true,
				Pool:   &benchrun.PoolConfig{MaxConns: conns, MaxStreams: embedded.MaxStreams},
				Setup: func(ctx context.Context) (*benchrun.Instance, error) {
					return h2PoolInstance(ctx, e, req, addr, tlsCfg, conns)
				},
			},
			viaShoalHTTP,
			{
				Name: "single_conn",
				Pool: &benchrun.PoolConfig{MaxConns: 1, MaxStreams: embedded.MaxStreams},
				Setup: func(ctx context.Context) (*benchrun.Instance, error) {
					t, opened := h2Transport(tlsCfg, e.dialTimeout)
					cc, err := t.NewClientConn(ctx, "https", addr)
					if err != nil {
						return nil, fmt.Errorf("HTTP/2 connection to %s: %w", addr, err)
					}
					return &benchrun.Instance{
						Op:          func(ctx context.Context) (time.Duration, error) { return 0, req.roundTrip(ctx, cc) },
						ConnsOpened: opened.Load,
						Close:       cc.Close,
					}, nil
				},
			},
		},
	}
}

// h2PoolInstance opens a shoal pool of conns HTTP/2 connections, each
// serving up to MaxStreams requests at once.
func h2PoolInstance(ctx context.Context, e *env, req *httpRequest, addr string, tlsCfg *tls.Config, conns int) (*benchrun.Instance, error) {
	t, _ := h2Transport(tlsCfg, e.dialTimeout)
	pool, err := shoal.New(shoal.Config[*http.ClientConn]{
		Dial: func(ctx context.Context) (*http.ClientConn, error) {
			cc, err := t.NewClientConn(ctx, "https", addr)
			if err != nil {
				return nil, fmt.Errorf("HTTP/2 connection to %s: %w", addr, err)
			}
			return cc, nil
		},
		Close:       (*http.ClientConn).Close,
		MaxConns:    conns,
		MinConns:    conns,
		MaxStreams:  embedded.MaxStreams,
		DialTimeout: e.dialTimeout,
	})
	if err != nil {
		return nil, err
	}
	if err := pool.Warm(ctx); err != nil {
		closePool(pool)
		return nil, err
	}
	return &benchrun.Instance{
		Op: func(ctx context.Context) (time.Duration, error) {
			t0 := time.Now()
			lease, err := pool.Acquire(ctx)
			wait := time.Since(t0)
			if err != nil {
				return wait, err
			}
			cc := lease.Value()
			if err := req.roundTrip(ctx, cc); err != nil {
				if cc.Err() != nil {
					lease.Discard()
				} else {
					lease.Release()
				}
				return wait, err
			}
			lease.Release()
			return wait, nil
		},
		ConnsOpened: func() int64 { return pool.Stats().Dials },
		Close:       func() error { return closePool(pool) },
	}, nil
}

// grpcGroup compares one gRPC connection with a shoalgrpc pool. addr ""
// means the embedded gRPC server, started by the first case that needs it.
func grpcGroup(e *env, addr string, tlsCfg *tls.Config, workers int) benchrun.Group {
	conns := connsFor(workers, embedded.MaxStreams)
	g := benchrun.Group{Title: "gRPC, " + benchrun.Plural(workers, "worker"), Workers: workers}
	mk := func(name string, maxConns int, open func(context.Context, grpcPoolOptions) (grpcClient, error), adapter string) benchrun.Case {
		c := benchrun.Case{Name: name, Pool: &benchrun.PoolConfig{MaxConns: maxConns, MaxStreams: embedded.MaxStreams}}
		if open == nil {
			c.Skip = notLanded(adapter)
			return c
		}
		c.Setup = func(ctx context.Context) (*benchrun.Instance, error) {
			target := addr
			if target == "" {
				var err error
				if target, err = e.embeddedGRPC(); err != nil {
					return nil, err
				}
			}
			waits := &benchrun.WaitObserver{}
			client, err := open(ctx, grpcPoolOptions{Target: target, TLS: tlsCfg, MaxConns: maxConns, MaxStreams: embedded.MaxStreams, DialTimeout: e.dialTimeout, Observer: waits})
			if err != nil {
				return nil, err
			}
			return &benchrun.Instance{
				Waits:       waits, // reports nothing for the single connection, which has no pool
				Op:          func(ctx context.Context) (time.Duration, error) { return 0, client.Call(ctx) },
				ConnsOpened: client.ConnsOpened,
				Close: func() error {
					ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
					defer cancel()
					return client.Close(ctx)
				},
			}, nil
		}
		return c
	}
	g.Cases = append(g.Cases,
		mk(fmt.Sprintf("shoalgrpc_%d_conns", conns), conns, newShoalGRPC, "shoalgrpc"),
		mk("single_grpc_conn", 1, newPlainGRPC, "shoalgrpc"),
	)
	return g
}
