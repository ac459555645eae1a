package shoaletcd_test

import (
	"context"
	"log"
	"net"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Four instances of a service, each with a pool of up to 32 connections,
// share 90 of the server's connections: each starts on its minimum of 2 and
// holds its fair share of the 90 as its demand changes. Run the same code
// in every instance; `shoal budget orders-db --etcd 127.0.0.1:2379` shows
// them. Any pool takes the budget the same way: shoalpgx's Config.Budget,
// shoalhttp's and shoalgrpc's Options.Budget.
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

	var dialer net.Dialer
	pool, err := shoal.New(shoal.Config[net.Conn]{
		Dial:     func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", "127.0.0.1:6379") },
		MaxConns: 32,
		Budget:   budget, // a permit from the budget before every dial
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)

	lease, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release()
	s := pool.Stats()
	log.Printf("this instance may hold %d of the budget's connections (demand %d, %d instances)",
		s.Share, s.Demand, s.BudgetMembers)
}

// The pools of one process share one Budget: in etcd the process is one
// member, and its pools divide the member's share between them by demand,
// each one's MinConns first. Status shows each pool's part.
func Example_poolsOfAProcess() {
	ctx := context.Background()
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}, DialTimeout: 2 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer etcd.Close()
	budget, err := shoaletcd.New(ctx, etcd, shoaletcd.Options{Name: "pg-main", Size: 90, Min: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer budget.Close()

	var dialer net.Dialer
	dial := func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", "127.0.0.1:5432") }
	for _, name := range []string{"orders", "billing"} {
		pool, err := shoal.New(shoal.Config[net.Conn]{Name: name, Dial: dial, MaxConns: 32, MinConns: 2, Budget: budget})
		if err != nil {
			log.Fatal(err)
		}
		defer pool.Close(ctx)
	}
	for _, p := range budget.Status().Pools {
		log.Printf("%s: %d of this member's %d (demand %d, min %d)", p.Name, p.Share, budget.Status().Share, p.Demand, p.Min)
	}
}
