package stdlib_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// sql.Conn.Raw reaches the pgx connection behind a database/sql one, for
// what only pgx has, such as COPY.
func ExampleConn() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()

	conn, err := db.Conn(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "create temporary table points (x int, y int)"); err != nil {
		log.Fatal(err)
	}
	err = conn.Raw(func(driverConn any) error {
		pgxConn := driverConn.(*stdlib.Conn).Conn()
		_, err := pgxConn.CopyFrom(ctx, pgx.Identifier{"points"}, []string{"x", "y"},
			pgx.CopyFromRows([][]any{{1, 2}, {3, 4}}))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	var sum sql.NullInt64
	if err := conn.QueryRowContext(ctx, "select sum(x + y) from points").Scan(&sum); err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum.Int64)
}

// One pool serves pgx and database/sql code at once, under one MaxConns:
// the *sql.DB's connections are leases from the pool.
func ExampleOpenDBFromPool() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after db.Close: Close waits for the DB's leases
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close() // leaves the pool open

	var name string
	if err := db.QueryRowContext(ctx, "select $1::text", "ana").Scan(&name); err != nil {
		log.Fatal(err)
	}
	var n int // the same pool, through pgx
	if err := pool.QueryRow(ctx, "select count(*) from pg_stat_activity").Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println(name, n > 0)
}
