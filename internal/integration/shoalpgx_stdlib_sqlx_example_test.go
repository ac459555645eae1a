package integration_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jmoiron/sqlx"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// One shoalpgx pool serves pgx and database/sql code (here sqlx) at once,
// under one MaxConns, through shoalpgx/stdlib.
func Example_sqlx() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after db.Close: Close waits for the DB's leases

	// sqlx needs the driver's name only to pick the placeholder style:
	// "pgx" gives $1, $2, ...
	db := sqlx.NewDb(stdlib.OpenDBFromPool(pool), "pgx")
	defer db.Close() // leaves the pool open

	type user struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
	}
	var users []user
	err = db.SelectContext(ctx, &users,
		"select id, name from (values (1, 'ana'), (2, 'bo'), (3, 'cy')) as u(id, name) where id >= $1 order by id", 2)
	if err != nil {
		log.Fatal(err)
	}
	var first user
	if err := db.GetContext(ctx, &first, "select 1 as id, 'ana' as name"); err != nil {
		log.Fatal(err)
	}

	// The same pool, through pgx.
	var n int
	if err := pool.QueryRow(ctx, "select count(*) from pg_stat_activity").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(first, users, n > 0)
}
