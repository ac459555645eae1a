package stdlib_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// The *sql.DB borrows the pool; it does not own it. Closing the DB leaves
// the pool open, and a DB whose pool was closed fails each statement with
// shoal.ErrClosed: close the DB first.
func ExampleOpenDBFromPool_closing() {
	ctx := context.Background()
	pool, err := shoalpgx.New(ctx, "postgres://app@db.internal:5432/app") // dials nothing yet
	if err != nil {
		log.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)

	pool.Close()
	_, err = db.ExecContext(ctx, "SELECT 1")
	fmt.Println(errors.Is(err, shoal.ErrClosed))
	fmt.Println(db.Close()) // the DB's own close: nothing of the pool's
	// Output:
	// true
	// <nil>
}
