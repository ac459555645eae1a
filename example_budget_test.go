package shoal_test

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal"
)

// Two pools of one process share a budget of 4 connections: each is
// granted its MinConns first, and the rest goes by demand.
func ExampleNewBudget() {
	budget, err := shoal.NewBudget(4, shoal.BudgetName("tenants"), shoal.BudgetIdleTime(2*time.Second))
	if err != nil {
		panic(err)
	}
	dial := func(ctx context.Context) (*session, error) { return &session{}, nil }
	orders, _ := shoal.New(shoal.Config[*session]{Name: "orders", Dial: dial, MaxConns: 4, Budget: budget})
	defer orders.Close(context.Background())
	billing, _ := shoal.New(shoal.Config[*session]{Name: "billing", Dial: dial, MaxConns: 4, MinConns: 1, Budget: budget})
	defer billing.Close(context.Background())

	for _, m := range budget.Stats().Members {
		fmt.Printf("%s: min %d, share %d\n", m.Name, m.Min, m.Share)
	}
	fmt.Println("pools:", budget.Members(), "of", orders.Stats().BudgetMembers)
	// Output:
	// orders: min 0, share 2
	// billing: min 1, share 2
	// pools: 2 of 2
}

// The budget's Stats show each pool's part: what it asks for (the highest
// demand of the last IdleTime), its share, and the permits it holds.
func ExampleLocalBudget_Stats() {
	budget, _ := shoal.NewBudget(3, shoal.BudgetName("origins"))
	pool, _ := shoal.New(shoal.Config[*session]{
		Name:     "api",
		Dial:     func(ctx context.Context) (*session, error) { return &session{}, nil },
		MaxConns: 3,
		Budget:   budget,
	})
	defer pool.Close(context.Background())
	lease, err := pool.Acquire(context.Background())
	if err != nil {
		panic(err)
	}
	defer lease.Release()

	s := budget.Stats()
	fmt.Printf("%s: %d of %d permits out\n", s.Name, s.InUse, s.Size)
	for _, m := range s.Members {
		fmt.Printf("%s: share %d, holds %d\n", m.Name, m.Share, m.Held)
	}
	// Output:
	// origins: 1 of 3 permits out
	// api: share 3, holds 1
}

// loggingBudget is a LocalBudget that says which pool asks for a permit.
type loggingBudget struct{ *shoal.LocalBudget }

func (b loggingBudget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	if m, ok := shoal.BudgetMemberFromContext(ctx).(interface{ Name() string }); ok {
		fmt.Println("a permit for", m.Name())
	}
	return b.LocalBudget.Acquire(ctx)
}

// A Budget that serves several pools finds out which one asks for a
// permit from the context the pool passes to Acquire.
func ExampleBudgetMemberFromContext() {
	local, _ := shoal.NewBudget(2)
	pool, _ := shoal.New(shoal.Config[*session]{
		Name:     "orders",
		Dial:     func(ctx context.Context) (*session, error) { return &session{}, nil },
		MaxConns: 2,
		Budget:   loggingBudget{local},
	})
	defer pool.Close(context.Background())
	lease, err := pool.Acquire(context.Background())
	if err != nil {
		panic(err)
	}
	lease.Release()
	// Output: a permit for orders
}

// worker is a member of a budget that is not a pool: it asks for permits
// itself, with AcquireFor.
type worker struct{ share int }

func (w *worker) Demand() int    { return 1 }
func (w *worker) SetShare(n int) { w.share = n }

func ExampleLocalBudget_AcquireFor() {
	budget, _ := shoal.NewBudget(2)
	w := &worker{}
	leave, err := budget.Join(w)
	if err != nil {
		panic(err)
	}
	defer leave()
	permit, err := budget.AcquireFor(context.Background(), w)
	if err != nil {
		panic(err)
	}
	fmt.Println("share", w.share, "slot", permit.Slot())
	permit.Release()
	// Output: share 2 slot 0
}

// A pool per tenant, made on the tenant's first request, all under one
// budget of 20 connections, closed after five idle minutes.
func ExampleNewGroup() {
	budget, _ := shoal.NewBudget(20, shoal.BudgetName("tenants"))
	dsn := map[string]string{"acme": "db-1/acme", "globex": "db-2/globex"} // where each tenant's data lives
	group, err := shoal.NewGroup(shoal.GroupConfig[string, *session]{
		Name: "tenants",
		Config: func(tenant string) (shoal.Config[*session], error) {
			addr, ok := dsn[tenant]
			if !ok {
				return shoal.Config[*session]{}, fmt.Errorf("unknown tenant %q", tenant)
			}
			return shoal.Config[*session]{
				Name:     tenant,
				Dial:     func(ctx context.Context) (*session, error) { _ = addr; return &session{}, nil },
				MaxConns: 8,
				MinConns: 1, // a tenant's minimum: no other tenant's burst takes it
			}, nil
		},
		Budget:      budget,
		IdleTimeout: 5 * time.Minute,
		MaxPools:    100,
	})
	if err != nil {
		panic(err)
	}
	defer group.Close(context.Background())

	ctx := context.Background()
	for _, tenant := range []string{"acme", "globex", "acme"} {
		err := group.Do(ctx, tenant, func(s *session) error { return nil })
		fmt.Println(tenant, err)
	}
	fmt.Println(group.Do(ctx, "initech", func(s *session) error { return nil }))
	fmt.Println("pools:", group.Len(), "in the budget:", budget.Members())
	// Output:
	// acme <nil>
	// globex <nil>
	// acme <nil>
	// shoal: group "tenants": the Config of a key: unknown tenant "initech"
	// pools: 2 in the budget: 2
}

func ExampleLocalBudget() {
	budget, err := shoal.NewBudget(40, shoal.BudgetName("origins"))
	if err != nil {
		panic(err)
	}
	fmt.Println(budget.Name(), budget.Size(), budget.Members())
	// Output: origins 40 0
}

// Acquire takes a lease from the key's pool, making it on first use; Stats
// shows each key's pool.
func ExampleGroup_Acquire() {
	group, _ := shoal.NewGroup(shoal.GroupConfig[int, *session]{
		Config: func(shard int) (shoal.Config[*session], error) {
			return shoal.Config[*session]{
				Name:     fmt.Sprint("shard-", shard),
				Dial:     func(ctx context.Context) (*session, error) { return &session{id: shard}, nil },
				MaxConns: 4,
			}, nil
		},
	})
	defer group.Close(context.Background())
	lease, err := group.Acquire(context.Background(), 7)
	if err != nil {
		panic(err)
	}
	fmt.Println(lease.Value().query("SELECT 1"))
	fmt.Println("shard 7 leases:", group.Stats()[7].Leases)
	lease.Release()
	// Output:
	// session 7 ran "SELECT 1"
	// shard 7 leases: 1
}
