package shoalpgx

import (
	"fmt"
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// MaxPools pools whose minimums fill the budget: each new key evicts the
// least recently used pool and gets a pool of its own, the evicted pool's
// minimum back in the budget before the new one joins, though its
// connection takes a round trip to close. Pipelined pools too, whose
// shared connections the budget has no room for beside the minimums: their
// statements run on their whole connections.
func TestGroupEvictionMakesRoomInTheBudget(t *testing.T) {
	for _, pipeline := range []int{0, 2} {
		t.Run(fmt.Sprint("pipeline=", pipeline), func(t *testing.T) {
			connString := pgtest.ConnString(t)
			ctx := pgtest.Ctx(t)
			budget, err := shoal.NewBudget(2)
			if err != nil {
				t.Fatal(err)
			}
			g, err := NewGroup(GroupConfig{
				Budget:      budget,
				MaxPools:    2,
				IdleTimeout: -1,
				Config: func(string) (*Config, error) {
					cfg, err := ParseConfig(connString)
					if err != nil {
						return nil, err
					}
					cfg.ConnConfig.RuntimeParams["application_name"] = pgtest.AppName(t)
					cfg.MinConns = 1
					cfg.MaxConns = 3
					cfg.Pipeline = pipeline
					return cfg, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(ctx)
			for i := range 6 {
				key := fmt.Sprint("t", i)
				if _, err := g.Exec(ctx, key, "SELECT 1"); err != nil {
					t.Fatalf("key %s, with MaxPools 2 and room for 2 minimums: %v", key, err)
				}
			}
		})
	}
}
