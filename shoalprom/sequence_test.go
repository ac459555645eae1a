package shoalprom_test

import (
	"testing"

	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The fixtures shared with shoalotel's tests, under the names used here.
type fakeConn = metricstest.FakeConn

var (
	fakeDial    = metricstest.FakeDial
	runSequence = metricstest.RunSequence
)

const (
	seqMaxConns      = metricstest.SeqMaxConns
	seqMinIdle       = metricstest.SeqMinIdle
	seqHeldWait      = metricstest.SeqHeldWait
	seqLeakThreshold = metricstest.SeqLeakThreshold
)
