package main

import (
	"crypto/tls"
	"sync"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/internal/embedded"
)

// scenario is one experiment of `shoal bench`.
type scenario struct {
	name        string
	description string
	// plan returns the groups to run in env, or a plan whose skip says
	// why the scenario does not run there.
	plan func(env *env) (*plan, error)
}

// plan is a scenario made concrete for one environment.
type plan struct {
	server string // what it runs against, for the output
	skip   string // when set, the whole scenario does not run, and why
	// description, when set, replaces the scenario's in the output: what
	// runs against a target can differ from what runs on the embedded
	// servers, whose description the help shows.
	description string
	groups      []benchrun.Group
}

// env is where the scenarios run: the embedded servers or a target.
type env struct {
	servers     *embedded.Servers // nil with a target
	target      *target           // nil on the embedded servers
	workers     int               // --workers, 0 for each scenario's own
	dialTimeout time.Duration

	grpcOnce sync.Once // starts the embedded gRPC server on first use
	grpcAddr string
	grpcErr  error
}

// embeddedGRPC starts the embedded gRPC server the first time it is asked
// for and returns its address; it stops with the other servers.
func (e *env) embeddedGRPC() (string, error) {
	e.grpcOnce.Do(func() {
		if startGRPCServer == nil || e.servers == nil {
			e.grpcErr = errNotLanded("shoalgrpc")
			return
		}
		addr, stop, err := startGRPCServer(e.servers.Cert, multiplexWork)
		if err != nil {
			e.grpcErr = err
			return
		}
		e.grpcAddr = addr
		e.servers.OnClose(stop)
	})
	return e.grpcAddr, e.grpcErr
}

// clientTLS is the TLS configuration of clients of the embedded servers;
// nil (the system's roots) for a target.
func (e *env) clientTLS() *tls.Config {
	if e.servers == nil {
		return nil
	}
	return e.servers.Cert.ClientTLS()
}

// workersOr returns --workers when given, else def.
func (e *env) workersOr(def ...int) []int {
	if e.workers > 0 {
		return []int{e.workers}
	}
	return def
}

// allScenarios in the order they run.
var allScenarios = []scenario{
	churnScenario,
	partitionsScenario,
	multiplexScenario,
	transportScenario,
}

// scenarioNames lists the valid scenario names.
func scenarioNames() []string {
	names := make([]string, len(allScenarios))
	for i, s := range allScenarios {
		names[i] = s.name
	}
	return names
}

// skipPlan is a plan that does not run, and why.
func skipPlan(why string) (*plan, error) { return &plan{skip: why}, nil }

// workNote describes the simulated server work of a request.
func workNote(work time.Duration) string {
	if work <= 0 {
		return "no simulated work per request"
	}
	return work.String() + " of simulated work per request"
}
