package shoalotel_test

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeConn is the trivial connection the test pools hold.
type fakeConn struct{ id int64 }

// fakeDial hands out numbered fakeConns and never fails.
func fakeDial() func(context.Context) (*fakeConn, error) {
	var n atomic.Int64
	return func(context.Context) (*fakeConn, error) {
		return &fakeConn{id: n.Add(1)}, nil
	}
}
