package pgtest

import (
	"context"
	"testing"
)

// OpenIdle acquires n connections at once through acquire (a pool's
// Acquire), so that the pool opens n, and releases them: the pool then
// holds n idle connections to the server it reached, for a test to see
// what becomes of them.
func OpenIdle[C interface{ Release() }](t testing.TB, acquire func(context.Context) (C, error), n int) {
	t.Helper()
	held := make([]C, 0, n)
	for range n {
		c, err := acquire(Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.Release()
	}
}
