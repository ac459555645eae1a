package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined statement whose caller gave up still holds its shared
// connection until the server answers it (it is not cancelled), and Stat
// counts that connection as acquired: the group's pool is not idle then,
// and its idle sweeps leave it open, while they close a pool that has
// nothing in flight.
func TestGroupPoolWithAPipelinedStatementInFlightIsNotIdle(t *testing.T) {
	connString := pgtest.ConnString(t)
	ctx := pgtest.Ctx(t)
	g, err := NewGroup(GroupConfig{
		// Long enough that the group's own reaper never looks during the
		// test: the sweeps below are the only ones.
		IdleTimeout: time.Hour,
		Config: func(string) (*Config, error) {
			cfg, err := ParseConfig(connString)
			if err != nil {
				return nil, err
			}
			cfg.ConnConfig.RuntimeParams["application_name"] = pgtest.AppName(t)
			cfg.MaxConns = 4
			cfg.Pipeline = 4
			return cfg, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)

	for _, key := range []string{"quiet", "busy"} {
		// busy's shared connection open before the statement whose
		// deadline would otherwise pass during its dial.
		if _, err := g.Exec(ctx, key, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := g.Exec(short, "busy", "SELECT pg_sleep(3)"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec past its deadline: %v, want its deadline's error", err)
	}
	if s := g.Stat()["busy"]; s.AcquiredConns() != 1 || s.Pipelined().Leases != 1 {
		t.Fatalf("the abandoned statement's pool: %d acquired, %d pipelined in flight; want 1 and 1", s.AcquiredConns(), s.Pipelined().Leases)
	}

	// Two sweeps, the second past IdleTimeout after the first: a pool
	// found idle at both is closed at the second.
	from := time.Now().Add(2 * time.Hour)
	g.set.Sweep(from)
	g.set.Sweep(from.Add(2 * time.Hour))
	st := g.Stat()
	if _, ok := st["quiet"]; ok {
		t.Fatal("the sweeps left the quiet pool open: they closed nothing")
	}
	if _, ok := st["busy"]; !ok {
		t.Fatal("the group closed a pool for idleness while a statement of its was in flight")
	}
}
