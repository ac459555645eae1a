package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/keyed"
	"github.com/shoalpool/shoal/internal/namemask"
)

// GroupConfig configures a Group: how to make a tenant's pool, the budget
// its pools share, and how many it keeps. The fields mean what the core's
// shoal.GroupConfig's do.
type GroupConfig struct {
	// Name names the group in errors, and its pools whose Config has no
	// Name ("NAME[N]", the Nth pool made: never the key, which may be a
	// connection string with a password). Default "group".
	Name string
	// Config returns the Config of key's pool, from ParseConfig: the
	// tenant's database, or its role. Required. The group calls it on the
	// first use of key, and again when key is used after its pool was
	// closed; an error is returned to that caller and to any that came for
	// key while it ran, and the next use of key calls Config again; a
	// panic in it is returned as such an error. The group works on a copy,
	// whose Budget it sets to Budget when Budget is set.
	Config func(key string) (*Config, error)
	// Budget is the connection budget every pool of the group shares
	// (shoal.NewBudget's, or shoaletcd's); nil for none, each pool bounded
	// by its own MaxConns alone.
	Budget shoal.Budget
	// IdleTimeout closes a pool that has had no connection acquired, no
	// waiter and no caller for this long, freeing its connections and its
	// minimum in the budget. Default 5 minutes; negative keeps pools until
	// Close.
	IdleTimeout time.Duration
	// MaxPools bounds how many pools the group keeps open. A new key past
	// it closes the pool used least recently that is idle, or fails with
	// shoal.ErrExhausted when every pool is busy, or was used while the
	// group looked for an idle one. 0 or a negative value means no bound.
	MaxPools int
}

// Group keeps a Pool per key (a tenant with a database or a role of its
// own), made on the key's first use from GroupConfig.Config, all under one
// budget, so that a thousand tenants' pools hold no more connections than
// the budget's size between them. It closes pools idle for IdleTimeout
// and keeps at most MaxPools. Its methods are safe for concurrent use.
//
// It works as the core's shoal.Group does, but keeps Pools of this
// package, made with NewWithConfig, where shoal.Group's are shoal.New's. A
// key's methods are the Pool's (Acquire, Exec, Query...), with the key
// first.
type Group struct {
	cfg GroupConfig
	// set keeps the pools: making, idle closing and eviction, the same
	// code as shoal.Group's.
	set *keyed.Set[string, *Pool]
}

// NewGroup checks cfg and returns an empty group; pools are made as keys
// are used.
func NewGroup(cfg GroupConfig) (*Group, error) {
	if cfg.Config == nil {
		return nil, &ConfigError{Key: "GroupConfig.Config", Reason: "is required: the function that returns a key's Config"}
	}
	if cfg.Name == "" {
		cfg.Name = "group"
	}
	cfg.Name = namemask.Mask(cfg.Name) // as a pool's
	g := &Group{cfg: cfg}
	g.set = keyed.New(keyed.Config[string, *Pool]{
		Make:        g.make,
		Close:       func(ctx context.Context, p *Pool) error { return p.close(ctx) },
		Idle:        poolIdle,
		IdleTimeout: cfg.IdleTimeout,
		MaxPools:    cfg.MaxPools,
		ErrClosed:   shoal.ErrClosed,
		Exhausted: func(limit int) error {
			return fmt.Errorf("%w: shoalpgx group %q keeps %d pools (MaxPools), every one in use", shoal.ErrExhausted, cfg.Name, limit)
		},
		Panicked: func(v any) error {
			return fmt.Errorf("shoalpgx group %q: making a key's pool panicked: %v", cfg.Name, v)
		},
		GaveUp: func(err error) error {
			return fmt.Errorf("shoalpgx: group %q: waiting for a key's pool to be made: %w", cfg.Name, err)
		},
	})
	return g, nil
}

// Acquire acquires a connection from key's pool, making the pool first if
// key has none. See Pool.Acquire.
func (g *Group) Acquire(ctx context.Context, key string) (*Conn, error) {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return nil, err
	}
	defer g.set.Exit(e)
	return e.Pool().Acquire(ctx)
}

// AcquireFunc runs f on a connection of key's pool. See Pool.AcquireFunc.
func (g *Group) AcquireFunc(ctx context.Context, key string, f func(*Conn) error) error {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return err
	}
	defer g.set.Exit(e)
	return e.Pool().AcquireFunc(ctx, f)
}

// Exec runs sql on a connection of key's pool. See Pool.Exec.
func (g *Group) Exec(ctx context.Context, key, sql string, args ...any) (pgconn.CommandTag, error) {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer g.set.Exit(e)
	return e.Pool().Exec(ctx, sql, args...)
}

// Query runs sql on a connection of key's pool, held until the rows are
// closed. See Pool.Query.
func (g *Group) Query(ctx context.Context, key, sql string, args ...any) (pgx.Rows, error) {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return errRows{err: err}, err
	}
	defer g.set.Exit(e)
	return e.Pool().Query(ctx, sql, args...)
}

// QueryRow runs sql on a connection of key's pool; errors, a failed
// acquire's included, come from Scan. See Pool.QueryRow.
func (g *Group) QueryRow(ctx context.Context, key, sql string, args ...any) pgx.Row {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return errRow{err: err}
	}
	defer g.set.Exit(e)
	return e.Pool().QueryRow(ctx, sql, args...)
}

// Begin starts a transaction on a connection of key's pool. See
// Pool.Begin.
func (g *Group) Begin(ctx context.Context, key string) (pgx.Tx, error) {
	return g.BeginTx(ctx, key, pgx.TxOptions{})
}

// BeginTx starts a transaction with opts on a connection of key's pool.
// See Pool.BeginTx.
func (g *Group) BeginTx(ctx context.Context, key string, opts pgx.TxOptions) (pgx.Tx, error) {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return nil, err
	}
	defer g.set.Exit(e)
	return e.Pool().BeginTx(ctx, opts)
}

// Len returns how many pools the group keeps now, those being made
// included (as MaxPools counts them), where Stat has only those open.
func (g *Group) Len() int { return g.set.Len() }

// Stat returns the Stat of each key's pool open now.
func (g *Group) Stat() map[string]*Stat {
	pools := g.set.Pools()
	out := make(map[string]*Stat, len(pools))
	for k, p := range pools {
		out[k] = p.Stat()
	}
	return out
}

// Close closes every pool of the group, as Pool.Close does, and waits
// within ctx for every connection acquired to be released, pools still
// being made included (their Config may be slow). If ctx ends first, the
// pools stay closed, the rest of their connections close as their leases
// end, and the error wraps ctx's and says, per pool, what was still held
// (a *shoal.CloseError), as shoal.Group's Close does. Later acquires and
// queries fail with shoal.ErrClosed; calling Close again waits again.
func (g *Group) Close(ctx context.Context) error {
	errs, err := g.set.Close(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("shoalpgx: group %q: closing pools it closed for idleness or was making: %w", g.cfg.Name, err))
	}
	return errors.Join(errs...)
}
