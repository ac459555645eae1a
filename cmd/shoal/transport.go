package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// transportWork is the simulated server time of one transport request:
// none, the round trip through the HTTP server is the cost.
const transportWork time.Duration = 0

// transportWorkers is the default concurrency of transport: more than the 2
// idle connections per host http.DefaultTransport keeps.
const transportWorkers = 32

// transportScenario: three ways to make HTTP requests from Go.
var transportScenario = scenario{
	name:        "transport",
	description: "http.DefaultTransport, a tuned http.Transport and shoalhttp, over HTTP/1.1 as ClickHouse and InfluxDB speak it",
	plan:        planTransport,
}

func planTransport(e *env) (*plan, error) {
	var (
		p   = &plan{}
		req *httpRequest
	)
	tlsCfg := e.clientTLS()
	switch {
	case e.target == nil:
		p.server = fmt.Sprintf("embedded TLS HTTP/1.1 server %s, %s", e.servers.HTTP1.Addr(), workNote(transportWork))
		req = &httpRequest{url: e.servers.HTTP1.WorkURL(transportWork)}
	case speaksHTTP(e.target.Kind):
		p.server = e.target.Redacted
		req = targetHTTPRequest(e.target)
	default:
		return skipPlan("does not fit the " + e.target.Scheme + ":// target (it needs an HTTP one)")
	}
	for _, workers := range e.workersOr(transportWorkers) {
		p.groups = append(p.groups, benchrun.Group{
			Title:   benchrun.Plural(workers, "worker"),
			Workers: workers,
			Cases: []benchrun.Case{
				{
					Name: "tuned_transport",
					Pool: &benchrun.PoolConfig{MaxConns: workers},
					Setup: func(context.Context) (*benchrun.Instance, error) {
						t, n := tunedTransport(tlsCfg, e.dialTimeout, workers)
						return transportInstance(req, t, n), nil
					},
				},
				shoalHTTPCase(req, tlsCfg, e.dialTimeout, workers),
				{
					Name: "default_transport",
					Setup: func(context.Context) (*benchrun.Instance, error) {
						t, n := defaultTransport(tlsCfg, e.dialTimeout)
						return transportInstance(req, t, n), nil
					},
				},
			},
		})
	}
	return p, nil
}
