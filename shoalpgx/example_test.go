package shoalpgx_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalpgx"
)

// The examples that talk to a server have no Output line: they are compiled
// by go test but not run, since a developer's machine may have no server.

func Example() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	var greeting string
	if err := pool.QueryRow(ctx, "select 'hello, ' || $1", "world").Scan(&greeting); err != nil {
		log.Fatal(err)
	}
	fmt.Println(greeting)
}

func ExamplePool_Query() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// The connection is held until the rows are closed; CollectRows
	// closes them.
	rows, err := pool.Query(ctx, "select generate_series(1, $1)", 3)
	if err != nil {
		log.Fatal(err)
	}
	numbers, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(numbers)
}

func ExamplePool_Begin() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// Rollback after Commit does nothing; deferring it releases the
	// connection on every path.
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "update accounts set balance = balance - 10 where id = $1", 1); err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "update accounts set balance = balance + 10 where id = $1", 2); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
}

func ExamplePool_Acquire() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	conn, err := pool.Acquire(ctx)
	var acqErr *shoal.AcquireError
	switch {
	case errors.As(err, &acqErr):
		// Says what was waited for and how long, and the last dial's
		// error when the server is unreachable.
		log.Fatal(acqErr)
	case err != nil:
		log.Fatal(err)
	}
	defer conn.Release()
	// Session state set here stays with the connection, as with pgxpool.
	if _, err := conn.Exec(ctx, "set statement_timeout = '5s'"); err != nil {
		log.Fatal(err)
	}
}

func ExampleParseConfig() {
	cfg, err := shoalpgx.ParseConfig("postgres://app:secret@127.0.0.1:5432/app?sslmode=disable" +
		"&pool_max_conns=16&pool_min_idle=4&pool_max_conn_idle_time=5m")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.MaxConns, cfg.MinIdleConns, cfg.MaxConnIdleTime)

	_, err = shoalpgx.ParseConfig("postgres://app:secret@127.0.0.1/app?pool_max_conns=many")
	fmt.Println(err)
	// Output:
	// 16 4 5m0s
	// shoalpgx: pool_max_conns must be an integer >= 1, got "many"
}

func ExampleConfig_String() {
	cfg, err := shoalpgx.ParseConfig("postgres://app:secret@127.0.0.1:5432/app?sslmode=disable&pool_max_conns=16")
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConnLifetime = 0
	fmt.Println(cfg)
	// Output:
	// shoalpgx.Config{host=127.0.0.1 port=5432 database=app user=app password=xxxxx tls=off pool_max_conns=16 pool_min_idle=0 pool_min_conns=0 pool_partitions=0 pool_max_waiters=0 pool_max_conn_lifetime=0s pool_max_conn_lifetime_jitter=0s pool_max_conn_idle_time=30m0s pool_health_check_after=1s pool_health_check_period=1m0s pool_ping_timeout=0s pool_cancel_timeout=1s pool_barge_window=4ms pool_host_connect_timeout=2s pool_role_check_period=1s pool_max_standby_lag=0s pool_read_max_conns=0 pool_pipeline=0 pool_pipeline_fill=800µs}
}

// With pool_pipeline, statements outside a transaction share connections,
// up to 8 in flight on one here; a transaction still gets a connection of
// its own. See the package doc, "Pipelining".
func ExampleConfig_pipeline() {
	ctx := context.Background()
	cfg, err := shoalpgx.ParseConfig(os.Getenv("DATABASE_URL")) // or ...?pool_max_conns=8&pool_pipeline=8
	if err != nil {
		log.Fatal(err)
	}
	cfg.MaxConns, cfg.Pipeline = 8, 8
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	// Shared: each statement with its own Sync, so each succeeds or fails
	// alone.
	var n int
	if err := pool.QueryRow(ctx, "select count(*) from users where active = $1", true).Scan(&n); err != nil {
		log.Fatal(err)
	}
	// Whole: the transaction holds its connection until it ends.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "update users set seen = now() where id = $1", 42)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n)
}
