package shoaletcd_test

import (
	"context"
	"log"
	"time"

	"github.com/shoalpool/shoal/shoaletcd"
	"github.com/shoalpool/shoal/shoalpgx"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Four instances of a service, each with pool_max_conns=32, share 90 of
// the database's connections: each starts on its minimum of 2 and holds
// its fair share of the 90 as its demand changes. Run the same code in
// every instance; `shoal budget orders-db --etcd 127.0.0.1:2379` shows
// them.
func Example() {
	ctx := context.Background()
	etcd, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"127.0.0.1:2379", "127.0.0.1:22379", "127.0.0.1:32379"},
		DialTimeout: 2 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer etcd.Close()

	// New does not fail when etcd is down: the instance starts on Min
	// and joins when etcd answers.
	budget, err := shoaletcd.New(ctx, etcd, shoaletcd.Options{Name: "orders-db", Size: 90, Min: 2})
	if err != nil {
		log.Fatal(err) // bad options, or members that disagree on Size
	}
	defer budget.Close()

	cfg, err := shoalpgx.ParseConfig("postgres://app@127.0.0.1:5432/orders?pool_max_conns=32")
	if err != nil {
		log.Fatal(err)
	}
	cfg.Budget = budget // and shoalpgx fences each connection at the server
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
		log.Fatal(err)
	}
	s := pool.Stats()
	log.Printf("%d orders; this instance may hold %d of the budget's connections (demand %d, %d instances)",
		n, s.Share, s.Demand, s.BudgetMembers)
}
