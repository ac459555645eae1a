package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/embedded"
)

// The adapters (shoalhttp, shoalgrpc, shoalpgx) are reached only through
// the variables below. Each is nil until a wire_*.go file, one per adapter,
// sets it; a scenario that needs a nil one reports "<adapter> has not landed
// yet" instead of a number. Wiring an adapter in is that one small file.

// notLanded is the reason a case or scenario gives for a missing adapter.
func notLanded(adapter string) string { return adapter + " has not landed yet" }

// httpPoolOptions is what the bench asks of an HTTP adapter.
type httpPoolOptions struct {
	MaxConnsPerHost int
	TLS             *tls.Config
	DialTimeout     time.Duration
	Observer        shoal.Observer // every origin's pools report to it; nil for none
}

// httpPool is an http.RoundTripper built on a shoal pool.
type httpPool interface {
	http.RoundTripper
	// ConnsOpened counts the connections it has dialled.
	ConnsOpened() int64
	Close(ctx context.Context) error
}

// newShoalHTTP builds a shoalhttp transport; nil until shoalhttp is wired.
var newShoalHTTP func(opts httpPoolOptions) (httpPool, error)

// grpcPoolOptions is what the bench asks of a gRPC adapter.
type grpcPoolOptions struct {
	Target      string      // host:port
	TLS         *tls.Config // nil for plaintext
	MaxConns    int         // 1 for a single connection
	MaxStreams  int
	DialTimeout time.Duration
	Observer    shoal.Observer // the pool reports to it (the single connection cannot); nil for none
}

// grpcClient makes one small unary call per Call: the health check
// (grpc.health.v1.Health/Check).
type grpcClient interface {
	Call(ctx context.Context) error
	ConnsOpened() int64
	Close(ctx context.Context) error
}

// newShoalGRPC builds a shoalgrpc pool; nil until shoalgrpc is wired.
var newShoalGRPC func(ctx context.Context, opts grpcPoolOptions) (grpcClient, error)

// newPlainGRPC builds one ordinary grpc.ClientConn (the baseline); nil
// until shoalgrpc is wired, since only it brings grpc into the build.
var newPlainGRPC func(ctx context.Context, opts grpcPoolOptions) (grpcClient, error)

// startGRPCServer starts the embedded gRPC server (health service,
// MaxConcurrentStreams 100) on loopback and returns its address and its
// stop function; nil until shoalgrpc is wired.
var startGRPCServer func(cert *embedded.Cert, work time.Duration) (addr string, stop func() error, err error)

// pgPoolOptions is what the bench asks of a PostgreSQL adapter.
type pgPoolOptions struct {
	ConnString  string // with the password: handed to the adapter only
	MaxConns    int
	Partitions  int
	DialTimeout time.Duration
	// Pipeline, above 0, is shoalpgx's pool_pipeline: statements share
	// the pool's connections, up to Pipeline in flight on one.
	Pipeline int
	// Observer, with Pipeline, hears each statement's wait for room on a
	// shared connection, which no acquire of the caller's can time; nil
	// for none.
	Observer shoal.Observer
}

// pgPool runs a statement on a pooled connection.
type pgPool interface {
	Exec(ctx context.Context, sql string) (acquireWait time.Duration, err error)
	ConnsOpened() int64
	Close(ctx context.Context) error
}

// newShoalPGX opens a shoalpgx pool and warms it; nil until shoalpgx is
// wired.
var newShoalPGX func(ctx context.Context, opts pgPoolOptions) (pgPool, error)

// pgConnectExec opens a new connection, runs sql and closes it: the
// connection-per-query baseline; nil until shoalpgx is wired.
var pgConnectExec func(ctx context.Context, connString, sql string) error

// pgPoolSettings returns the connection string (its password masked) and
// Go Config fields a user pastes for a configuration; nil until shoalpgx
// is wired.
var pgPoolSettings func(rawConnString string, maxConns, partitions int) (connString, goConfig string)

// pgHosts returns the address of every host a PostgreSQL connection string
// names, in the order they are tried, as shoalpgx reads it (several hosts,
// the host and port keywords): host:port, or the path of a Unix socket.
// nil until shoalpgx is wired (a key=value --target is then refused).
var pgHosts func(connString string) ([]string, error)

// errNotLanded is the error of an operation whose adapter is missing.
func errNotLanded(adapter string) error { return fmt.Errorf("%s", notLanded(adapter)) }

// pgServer is what the sweep's preflight learns of a PostgreSQL server.
// Each count of connections open leaves out the preflight's own.
type pgServer struct {
	MaxConnections int    // max_connections
	Reserved       int    // the slots of max_connections the role may not take
	InUse          int    // client backends open now
	Role           string // the role logged in as
	RoleLimit      int    // the role's CONNECTION LIMIT; -1 for none, or for a superuser
	RoleInUse      int    // the role's connections open now
	Database       string // the database connected to
	DBLimit        int    // the database's CONNECTION LIMIT; -1 for none, or for a superuser
	DBInUse        int    // the database's connections open now
}

// errQueryWrites is the preflight's error for a query the server refused
// in a read-only transaction (SQLSTATE 25006).
var errQueryWrites = errors.New("the query writes")

// pgPreflight connects once, reads the server's, the role's and the
// database's connection limits and the connections open against each
// and, if query is not empty, runs it once inside a read-only transaction
// that it rolls back; a query that writes fails with errQueryWrites
// (wrapping the server's error), any other failure with the server's own
// error. nil until shoalpgx is wired.
var pgPreflight func(ctx context.Context, connString, query string) (pgServer, error)

// pgDefaultPool returns the MaxConns and Partitions a shoalpgx pool opened
// on rawConnString gets without being told (its pool_max_conns and
// pool_partitions, else shoalpgx's defaults): the configuration the sweep
// measures the others against. nil until shoalpgx is wired.
var pgDefaultPool func(rawConnString string) (maxConns, partitions int, err error)
