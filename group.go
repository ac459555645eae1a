package shoal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/internal/keyed"
	"github.com/shoalpool/shoal/internal/namemask"
)

// GroupConfig configures a Group: how to make the pool of a key, the budget
// its pools share, and how many it keeps.
type GroupConfig[K comparable, T any] struct {
	// Name names the group in errors, and its pools whose Config has no
	// Name ("NAME[N]", the Nth pool made). Default "group".
	Name string
	// Config returns the Config of key's pool (a tenant's database, say).
	// Required. The group calls it on the first use of key, and again when
	// key is used after its pool was closed; an error is returned to that
	// caller and to any that came for key while it ran, and the next use of
	// key calls Config again. Callers wait for it within their ctx, the
	// one whose use made the pool included, and the pool is made for the
	// next caller even when they have left. A panic in it is returned as
	// such an error. The group sets the Config's Budget to Budget when
	// Budget is set.
	Config func(key K) (Config[T], error)
	// Budget is the connection budget every pool of the group shares
	// (NewBudget's, or shoaletcd's); nil for none, each pool bounded by
	// its own MaxConns alone.
	Budget Budget
	// IdleTimeout closes a pool that has had no lease, no waiter and no
	// caller for this long, freeing its connections and its minimum in
	// the budget. Default 5 minutes; negative keeps pools until Close.
	IdleTimeout time.Duration
	// MaxPools bounds how many pools the group keeps open. A new key past
	// it closes the pool used least recently that is idle (no lease, no
	// waiter), or fails with ErrExhausted when every pool is busy, or was
	// used while the group looked for an idle one. 0 or a negative value
	// means no bound. A pool the group closes keeps its minimum in the
	// Budget until its connections have closed: a new pool that the Budget
	// refuses for minimums waits for that and joins then, for as long as a
	// caller waits for it (each within its own ctx).
	MaxPools int
}

// Group keeps a pool per key, made on the key's first use from a function
// of yours, all under one budget: a pool per tenant database (or role),
// per origin, per shard. It closes pools idle for IdleTimeout, and keeps at
// most MaxPools. Its methods are safe for concurrent use.
type Group[K comparable, T any] struct {
	cfg GroupConfig[K, T]
	// set keeps the pools: making, idle closing and eviction, shared with
	// shoalpgx's Group, whose pools are not this package's.
	set *keyed.Set[K, *Pool[T]]
}

// NewGroup checks cfg and returns an empty group; pools are made as keys
// are used.
func NewGroup[K comparable, T any](cfg GroupConfig[K, T]) (*Group[K, T], error) {
	if cfg.Config == nil {
		return nil, &ConfigError{Struct: "shoal.GroupConfig", Field: "Config", Reason: "is required: the function that makes a key's pool"}
	}
	if cfg.Name == "" {
		cfg.Name = "group"
	}
	cfg.Name = namemask.Mask(cfg.Name) // as a pool's (Config.Name)
	g := &Group[K, T]{cfg: cfg}
	g.set = keyed.New(keyed.Config[K, *Pool[T]]{
		Make:        g.make,
		Close:       func(ctx context.Context, p *Pool[T]) error { return p.Close(ctx) },
		Idle:        poolIdle[T],
		IdleTimeout: cfg.IdleTimeout,
		MaxPools:    cfg.MaxPools,
		ErrClosed:   ErrClosed,
		Exhausted: func(limit int) error {
			return fmt.Errorf("%w: group %q keeps %d pools (MaxPools), every one in use", ErrExhausted, cfg.Name, limit)
		},
		Panicked: func(v any) error {
			return fmt.Errorf("shoal: group %q: making a key's pool panicked: %v", cfg.Name, v)
		},
		GaveUp: func(err error) error {
			return fmt.Errorf("shoal: group %q: waiting for a key's pool to be made: %w", cfg.Name, err)
		},
	})
	return g, nil
}

// Acquire returns a lease on a connection of key's pool, making the pool
// first if key has none. It waits within ctx, as Pool.Acquire does.
func (g *Group[K, T]) Acquire(ctx context.Context, key K) (Lease[T], error) {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return Lease[T]{}, err
	}
	defer g.set.Exit(e)
	return e.Pool().Acquire(ctx)
}

// Do runs fn on a connection of key's pool, as Pool.Do does.
func (g *Group[K, T]) Do(ctx context.Context, key K, fn func(conn T) error) error {
	e, err := g.set.Enter(ctx, key)
	if err != nil {
		return err
	}
	defer g.set.Exit(e)
	return e.Pool().Do(ctx, fn)
}

// Len returns how many pools the group keeps now, those being made
// included (as MaxPools counts them), where Stats has only those open.
func (g *Group[K, T]) Len() int { return g.set.Len() }

// Stats returns the Stats of each key's pool open now.
func (g *Group[K, T]) Stats() map[K]Stats {
	pools := g.set.Pools()
	out := make(map[K]Stats, len(pools))
	for k, p := range pools {
		out[k] = p.Stats()
	}
	return out
}

// Close closes every pool of the group, as Pool.Close does, and waits for
// them within ctx, pools still being made included (their Config may be
// slow). Later Acquires fail with ErrClosed, as do those waiting for a
// pool that was being made. Calling Close again waits again, as
// Pool.Close does: for a pool the first call left closing when its ctx
// ended, say.
func (g *Group[K, T]) Close(ctx context.Context) error {
	errs, err := g.set.Close(ctx)
	if err != nil {
		errs = append(errs, fmt.Errorf("shoal: group %q: closing pools it closed for idleness or was making: %w", g.cfg.Name, err))
	}
	return errors.Join(errs...)
}

// make makes key's pool, the Nth of the group. New takes no ctx: the
// caller's whose first use of key made the pool has no part in it. settle
// waits for the pools the group is closing (keyed.Config.Make).
func (g *Group[K, T]) make(_ context.Context, key K, n int, settle func() bool) (*Pool[T], error) {
	cfg, err := g.cfg.Config(key)
	if err != nil {
		return nil, fmt.Errorf("shoal: group %q: the Config of a key: %w", g.cfg.Name, err)
	}
	if cfg.Name == "" {
		// Not the key itself: it may be a connection string with a password.
		cfg.Name = fmt.Sprintf("%s[%d]", g.cfg.Name, n)
	}
	if g.cfg.Budget != nil {
		cfg.Budget = g.cfg.Budget
	}
	p, err := New(cfg)
	if refusedByBudget(err) && settle() {
		// The pools the group is closing held minimums that the budget
		// counted: they have given them back now.
		p, err = New(cfg)
	}
	if err != nil {
		// A ConfigError names the field, not the group whose key it is.
		return nil, fmt.Errorf("shoal: group %q: a key's pool: %w", g.cfg.Name, err)
	}
	return p, nil
}

// poolIdle reports whether p has no lease and no waiter, so that the group
// may close it. The group's idle sweep and a new key's eviction ask it of
// every pool, so it reads what Stats' Leases and Waiting would without
// making the rest of a snapshot, which walks every connection and
// allocates.
func poolIdle[T any](p *Pool[T]) bool {
	return p.hot.waiters.Load() == 0 && !p.eng.leased()
}

// refusedByBudget reports whether err is New's for a Budget that refused
// the pool (a LocalBudget's minimums that would not fit).
func refusedByBudget(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce) && ce.Struct == "" && ce.Field == "Budget"
}
