package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/bench/internal/pgurl"
)

// openWarm opens c's pool on dsn with pool_max_conns maxConns, its
// connections named app and their dials and sessions recorded in dials,
// and warms all maxConns of them, so that a case starts on a full pool.
// Opening and warming have 10s together.
func (c pgContender) openWarm(ctx context.Context, dsn string, maxConns int, dials *dialLog, app string) (pgPool, error) {
	cs, err := pgurl.WithParams(dsn, "pool_max_conns", fmt.Sprint(maxConns))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := c.open(ctx, cs, dials.pgOptions(app))
	if err != nil {
		return nil, err
	}
	if err := c.warm(ctx, p, maxConns); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}
