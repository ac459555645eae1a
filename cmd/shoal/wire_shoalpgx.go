package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shoalpool/shoal"

	"github.com/shoalpool/shoal/internal/connstr"
	"github.com/shoalpool/shoal/shoalpgx"
)

// This file wires shoalpgx into the bench and the sweep (see adapters.go).

func init() {
	newShoalPGX = openShoalPGX
	pgConnectExec = connectExec
	pgPoolSettings = shoalPGXSettings
	pgHosts = shoalPGXHosts
	pgPreflight = preflight
	pgDefaultPool = shoalPGXDefaultPool
}

// shoalPGXDefaultPool is pgDefaultPool on shoalpgx. Partitions 0 is
// resolved as the core resolves it, so that the sweep can name it.
func shoalPGXDefaultPool(raw string) (int, int, error) {
	cfg, err := shoalpgx.ParseConfig(raw)
	if err != nil {
		return 0, 0, err
	}
	maxConns, parts := int(cfg.MaxConns), cfg.Partitions
	if parts == 0 {
		parts = min(runtime.GOMAXPROCS(0), maxConns, 16)
	}
	return maxConns, parts, nil
}

// preflight is pgPreflight on pgx.
func preflight(ctx context.Context, connString, query string) (pgServer, error) {
	srv := pgServer{RoleLimit: -1, DBLimit: -1}
	cfg, err := shoalpgx.ParseConfig(connString)
	if err != nil {
		return srv, err
	}
	conn, err := connectPG(ctx, cfg.ConnConfig)
	if err != nil {
		return srv, err
	}
	defer leavePG(ctx, conn)
	err = conn.QueryRow(ctx, pgRoomQuery).
		Scan(&srv.MaxConnections, &srv.Reserved, &srv.InUse,
			&srv.Role, &srv.RoleLimit, &srv.RoleInUse, &srv.Database, &srv.DBLimit, &srv.DBInUse)
	if err != nil {
		return srv, fmt.Errorf("reading the server's, the role's and the database's connection limits: %w", err)
	}
	if query == "" {
		return srv, nil
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return srv, err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, query); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "25006" {
			return srv, fmt.Errorf("%w: %w", errQueryWrites, err)
		}
		return srv, fmt.Errorf("running --query once: %w", err)
	}
	return srv, nil
}

// lastDialError keeps a pool's latest failed dial, so that a pool that
// could not open its connections says why in the server's own words
// (PostgreSQL's "too many clients", SQLSTATE 53300) instead of only
// "context deadline exceeded".
type lastDialError struct {
	shoal.BaseObserver
	err atomic.Pointer[error]
}

// ObserveDial keeps err when the dial failed.
func (o *lastDialError) ObserveDial(_ time.Duration, err error) {
	if err != nil {
		o.err.Store(&err)
	}
}

// get returns the latest dial error, or nil.
func (o *lastDialError) get() error {
	if p := o.err.Load(); p != nil {
		return *p
	}
	return nil
}

// shoalPGXHosts reads a connection string as shoalpgx does (its errors
// mask the password) and returns the addresses pgconn dials, in order,
// each once: pgconn lists a host twice under sslmode=prefer, with TLS and
// without. A host that is a directory is a Unix socket in it.
func shoalPGXHosts(connString string) ([]string, error) {
	cfg, err := shoalpgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cc := cfg.ConnConfig
	_, first := pgconn.NetworkAddress(cc.Host, cc.Port)
	hosts := []string{first}
	for _, fb := range cc.Fallbacks {
		if _, addr := pgconn.NetworkAddress(fb.Host, fb.Port); !slices.Contains(hosts, addr) {
			hosts = append(hosts, addr)
		}
	}
	return hosts, nil
}

// pgWarmPoll is how often setup checks whether the pool's connections are
// all open.
const pgWarmPoll = 10 * time.Millisecond

// shoalPGXPool is a shoalpgx pool that times its acquires.
type shoalPGXPool struct{ pool *shoalpgx.Pool }

// Exec runs sql on a pooled connection and reports how long Acquire took.
func (p shoalPGXPool) Exec(ctx context.Context, sql string) (time.Duration, error) {
	t0 := time.Now()
	conn, err := p.pool.Acquire(ctx)
	wait := time.Since(t0)
	if err != nil {
		return wait, err
	}
	defer conn.Release()
	_, err = conn.Exec(ctx, sql)
	return wait, err
}

// ConnsOpened counts the pool's dials.
func (p shoalPGXPool) ConnsOpened() int64 { return p.pool.Stat().Shoal().Dials }

// Close closes the pool.
func (p shoalPGXPool) Close(context.Context) error {
	p.pool.Close()
	return nil
}

// openShoalPGX opens a pool of exactly MaxConns connections in Partitions
// partitions and waits until all are open.
func openShoalPGX(ctx context.Context, o pgPoolOptions) (pgPool, error) {
	cfg, err := shoalpgx.ParseConfig(o.ConnString)
	if err != nil {
		return nil, err
	}
	if o.Pipeline > 0 {
		return openShoalPGXPipelined(ctx, cfg, o)
	}
	cfg.MaxConns = int32(o.MaxConns)
	cfg.MinIdleConns = int32(o.MaxConns)
	cfg.Partitions = o.Partitions
	cfg.ConnConfig.ConnectTimeout = o.DialTimeout
	dialErr := &lastDialError{}
	cfg.Observer = dialErr
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	for pool.Stat().Shoal().TotalConns < o.MaxConns {
		var pgErr *pgconn.PgError
		if err := dialErr.get(); errors.As(err, &pgErr) && pgErr.Code == "53300" {
			// The server refuses more connections: waiting will not help.
			s := pool.Stat().Shoal()
			pool.Close()
			return nil, fmt.Errorf("%d of %d connections open: %w", s.TotalConns, o.MaxConns, err)
		}
		select {
		case <-ctx.Done():
			s := pool.Stat().Shoal()
			pool.Close()
			cause := ctx.Err()
			if err := dialErr.get(); err != nil {
				cause = fmt.Errorf("%w; the last dial: %w", cause, err)
			}
			return nil, fmt.Errorf("%d of %d connections open: %w", s.TotalConns, o.MaxConns, cause)
		case <-time.After(pgWarmPoll):
		}
	}
	return shoalPGXPool{pool}, nil
}

// connectExec opens a connection, runs sql and closes it.
func connectExec(ctx context.Context, connString, sql string) error {
	cfg, err := shoalpgx.ParseConfig(connString) // takes the pool_ keys out
	if err != nil {
		return err
	}
	conn, err := connectPG(ctx, cfg.ConnConfig)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	cerr := conn.Close(context.Background())
	if err == nil {
		err = cerr
	}
	return err
}

// shoalPGXSettings returns the connection string with the pool keys set
// and its password masked where it stands, and the Go code that sets the
// same.
func shoalPGXSettings(raw string, maxConns, partitions int) (string, string) {
	// pool_partitions always, 1 too: left out, it means as many
	// partitions as GOMAXPROCS, not the one the sweep measured.
	keys := fmt.Sprintf("pool_max_conns=%d&pool_partitions=%d", maxConns, partitions)
	var connString string
	if u, err := url.Parse(raw); err == nil && strings.Contains(raw, "://") {
		var kept []string
		for _, pair := range strings.Split(u.RawQuery, "&") {
			if pair != "" && !strings.HasPrefix(pair, "pool_max_conns=") && !strings.HasPrefix(pair, "pool_partitions=") {
				kept = append(kept, pair)
			}
		}
		u.RawQuery = strings.Join(append(kept, keys), "&")
		connString = u.String()
	} else {
		connString = dropKeywords(raw, "pool_max_conns", "pool_partitions") + " " + strings.ReplaceAll(keys, "&", " ")
	}
	connString = connstr.Mask(connString, redactedWord)
	goConfig := fmt.Sprintf(`cfg, err := shoalpgx.ParseConfig(connString)
cfg.MaxConns = %d
cfg.Partitions = %d
pool, err := shoalpgx.NewWithConfig(ctx, cfg)

// or, on the core: shoal.Config[T]{MaxConns: %d, Partitions: %d, ...}`, maxConns, partitions, maxConns, partitions)
	return connString, goConfig
}
