package shoalpgx

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// countingHandler is pgx's default handler (the connection's deadline set
// at once), counting the cancels it is asked to handle.
type countingHandler struct {
	pgconn.DeadlineContextWatcherHandler
	cancels *atomic.Int64
}

func (h *countingHandler) HandleCancel(ctx context.Context) {
	h.cancels.Add(1)
	h.DeadlineContextWatcherHandler.HandleCancel(ctx)
}

// A handler of one's own in ConnConfig.BuildContextWatcherHandler, set
// after ParseConfig, is the one pgx uses on the pool's connections: a
// statement whose context ends is cut off as that handler says (here
// pgx's default, which closes the connection), not cancelled at the
// server, and the pool dials anew, as docs/postgres.md says.
func TestOwnContextWatcherHandlerIsUsed(t *testing.T) {
	var cancels atomic.Int64
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.BuildContextWatcherHandler = func(pg *pgconn.PgConn) ctxwatch.Handler {
			return &countingHandler{DeadlineContextWatcherHandler: pgconn.DeadlineContextWatcherHandler{Conn: pg.Conn()}, cancels: &cancels}
		}
	})
	before := backendPIDs(t, p, 1)
	dials := p.Stat().Shoal().Dials
	ctx := pgtest.SleepingCtx(t, pgtest.AdminConn(t), before...)
	_, err := p.Exec(ctx, "SELECT pg_sleep(10)")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want an error matching context.Canceled", err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		t.Errorf("got the server's %v: the statement was cancelled at the server, not cut off by the handler set", pe)
	}
	if n := cancels.Load(); n == 0 {
		t.Error("the handler set after ParseConfig was never asked to cancel")
	}
	after := backendPIDs(t, p, 1)
	if slices.Equal(before, after) {
		t.Errorf("backend %v kept: pgx's default handler closes the connection", after)
	}
	if got := p.Stat().Shoal().Dials; got != dials+1 {
		t.Errorf("%d dials after the cut, want 1", got-dials)
	}
}
