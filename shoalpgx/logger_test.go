package shoalpgx

import (
	"context"
	"log"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/syncbuf"
)

// A pool with no Logger logs to slog.Default(), as every shoal pool does
// (Config.Logger): a server that is not there is seen without
// configuration, the line naming the pool.
func TestNilLoggerLogsToTheDefault(t *testing.T) {
	var logs syncbuf.Buffer
	old, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer func() {
		// SetDefault points the log package at the new handler too, and
		// setting the old default back does not undo that.
		slog.SetDefault(old)
		log.SetOutput(oldOut)
		log.SetFlags(oldFlags)
	}()

	// Nothing listens on port 1: every dial is refused.
	p, err := New(context.Background(), "postgres://app@127.0.0.1:1/app?pool_name=nolistener&connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pingErr := p.Ping(ctx)
	if pingErr == nil {
		t.Fatal("a ping to a port nobody listens on succeeded")
	}
	p.Close() // returns once the pool's goroutines, which log, are done
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "pool=nolistener") {
		t.Fatalf("the default logger got %q; want the failed dials' warning, naming the pool (the ping failed with %v)", got, pingErr)
	}
}
