package shoalprom_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The pools here fail dials and leak on purpose, and a pool with no
	// Logger logs to slog.Default(): the tests' default says nothing.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}
