package shoalpgx_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A database per tenant, every tenant's pool under one cap of 40
// connections: a pool is made on a tenant's first query and closed after
// five idle minutes.
func ExampleNewGroup() {
	budget, err := shoal.NewBudget(40, shoal.BudgetName("tenants"))
	if err != nil {
		log.Fatal(err)
	}
	tenants, err := shoalpgx.NewGroup(shoalpgx.GroupConfig{
		Name:   "tenants",
		Budget: budget,
		Config: func(tenant string) (*shoalpgx.Config, error) {
			cfg, err := shoalpgx.ParseConfig(os.Getenv("DATABASE_URL"))
			if err != nil {
				return nil, err
			}
			cfg.ConnConfig.Database = "tenant_" + tenant // or cfg.ConnConfig.User: a role per tenant
			cfg.MaxConns = 16
			return cfg, nil
		},
		IdleTimeout: 5 * time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	defer func() {
		// Close waits for the connections still acquired; bound the wait.
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := tenants.Close(closeCtx); err != nil {
			log.Print(err)
		}
	}()
	var orders int
	if err := tenants.QueryRow(ctx, "acme", "select count(*) from orders").Scan(&orders); err != nil {
		log.Fatal(err)
	}
	fmt.Println(orders)
}
