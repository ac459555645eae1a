package shoalpgx_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shoalpool/shoal/shoalpgx"
)

// Writes go to the primary of a multi-host string, reads through Reads to
// a standby no more than a second behind it (or to the primary while none
// qualifies); each pool's Hosts says where its connections are.
func ExamplePool_Reads() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx,
		"postgres://app@db1.internal:5432,db2.internal:5432/app?target_session_attrs=read-write&pool_max_standby_lag=1s")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	if _, err := pool.Exec(ctx, "insert into visits (page) values ($1)", "/"); err != nil {
		log.Fatal(err)
	}
	var n int
	if err := pool.Reads().QueryRow(ctx, "select count(*) from visits").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "visits (as of at most a second ago)")
	for _, h := range pool.Hosts() { // the pool's connections: the writes'
		fmt.Printf("writes %s: %s, %d open\n", h.Addr, h.Role, h.Open)
	}
	for _, h := range pool.Reads().Hosts() { // the read pool's
		fmt.Printf("reads %s: %s, %d open, lag %s\n", h.Addr, h.Role, h.Open, h.Lag)
	}
}
