package shoalpgx_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
	"github.com/shoalpool/shoal/shoalpgx"
)

// One pool serves pgx and database/sql code (here sqlx) at once, under one
// MaxConns.
func ExampleOpenDB() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close() // after db.Close: Close waits for the DB's leases

	// sqlx needs the driver's name only to pick the placeholder style:
	// "pgx" gives $1, $2, ...
	db := sqlx.NewDb(shoalpgx.OpenDB(pool), "pgx")
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

// sql.Conn.Raw reaches the pgx connection behind a database/sql one, for
// what only pgx has, such as COPY.
func ExampleSQLConn() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	db := shoalpgx.OpenDB(pool)
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
		pgxConn := driverConn.(*shoalpgx.SQLConn).Conn()
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
