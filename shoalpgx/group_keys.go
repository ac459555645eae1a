package shoalpgx

import (
	"context"
	"errors"
	"fmt"

	"github.com/shoalpool/shoal"
)

// make makes key's pool, the Nth of the group. ctx is the caller's whose
// first use of key made it, without its cancellation: the pool outlives
// that call, and its connections must not die with it. settle waits for
// the pools the group is closing (keyed.Config.Make).
func (g *Group) make(ctx context.Context, key string, n int, settle func() bool) (*Pool, error) {
	cfg, err := g.cfg.Config(key)
	if err != nil {
		return nil, fmt.Errorf("shoalpgx: group %q: the Config of a key: %w", g.cfg.Name, err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("shoalpgx: group %q: the Config of a key is nil", g.cfg.Name)
	}
	cfg = cfg.Copy()
	if cfg.Name == "" {
		// Not the key itself: it may be a connection string with a password.
		cfg.Name = fmt.Sprintf("%s[%d]", g.cfg.Name, n)
	}
	if g.cfg.Budget != nil {
		cfg.Budget = g.cfg.Budget
	}
	p, err := NewWithConfig(context.WithoutCancel(ctx), cfg)
	if refusedByBudget(err) && settle() {
		// The pools the group is closing held minimums that the budget
		// counted: they have given them back now.
		p, err = NewWithConfig(context.WithoutCancel(ctx), cfg)
	}
	if err != nil {
		// A ConfigError names the setting, not the group whose key it is.
		return nil, fmt.Errorf("shoalpgx: group %q: a key's pool: %w", g.cfg.Name, err)
	}
	return p, nil
}

// poolIdle reports whether p has no connection acquired and no waiter, so
// that the group may close it. A pipelined statement holds a shared
// connection as a lease does a whole one, until its answer: one whose
// caller gave up is still at the server, and Stat counts its connection as
// acquired.
func poolIdle(p *Pool) bool {
	if s := p.core.Stats(); s.Leases != 0 || s.Waiting != 0 {
		return false
	}
	if p.pipe == nil {
		return true
	}
	s := p.pipe.core.Stats()
	return s.Leases == 0 && s.Waiting == 0
}

// refusedByBudget reports whether err is NewWithConfig's for a Budget
// that refused the pool (a LocalBudget's minimums that would not fit).
func refusedByBudget(err error) bool {
	var ce *shoal.ConfigError
	return errors.As(err, &ce) && ce.Struct == "" && ce.Field == "Budget"
}
