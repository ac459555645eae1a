package shoal_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shoalpool/shoal"
)

// An acquire that times out on a full pool says who holds the connections;
// Pool.Holders lists them at any time. With LeakThreshold set, both name
// the function that took each lease.
func ExamplePool_Holders() {
	pool, _ := shoal.New(shoal.Config[*session]{
		Dial:          func(ctx context.Context) (*session, error) { return &session{id: 1}, nil },
		MaxConns:      1,
		LeakThreshold: time.Minute,
	})
	defer pool.Close(context.Background())

	held, _ := pool.Acquire(context.Background())
	defer held.Release()
	for _, h := range pool.Holders() {
		fmt.Println("held by", h.AcquiredBy)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := pool.Acquire(ctx)
	var ae *shoal.AcquireError
	if errors.As(err, &ae) && ae.Exhausted != nil {
		x := ae.Exhausted
		fmt.Println(x.Held, "held,", x.Longer, "for longer than the wait; the oldest by", x.OldestBy)
	}
	// Output:
	// held by github.com/shoalpool/shoal_test.ExamplePool_Holders
	// 1 held, 1 for longer than the wait; the oldest by github.com/shoalpool/shoal_test.ExamplePool_Holders
}
