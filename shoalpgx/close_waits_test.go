package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
)

// Close waits for every acquired connection to be released, as pgxpool's
// does and docs/postgres.md (Starting) says: a Conn, a Query's rows, a
// transaction and a batch each hold it until they end, and Close returns
// only then. Under synctest, synctest.Wait tells a Close that is blocked
// from one still on its way.
func TestCloseWaitsForEveryAcquiredConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(*testing.T, *Pool) (release func())
	}{
		{"Acquire", func(t *testing.T, p *Pool) func() {
			c, err := p.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return c.Release
		}},
		{"Query", func(t *testing.T, p *Pool) func() {
			rows, err := p.Query(context.Background(), "select")
			if err != nil {
				t.Fatal(err)
			}
			return rows.Close
		}},
		{"Begin", func(t *testing.T, p *Pool) func() {
			tx, err := p.Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := tx.Rollback(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}},
		{"SendBatch", func(t *testing.T, p *Pool) func() {
			b := &pgx.Batch{}
			b.Queue("select")
			br := p.SendBatch(context.Background(), b)
			if _, err := br.Exec(); err != nil {
				t.Fatal(err)
			}
			return func() { _ = br.Close() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The fake server speaks the simple protocol only.
				p := fakePool(t, newFakePG(t), func(c *Config) { c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol })
				release := tc.hold(t, p)
				closed := make(chan struct{})
				go func() { p.Close(); close(closed) }()
				synctest.Wait()
				select {
				case <-closed:
					t.Fatalf("Close returned while a connection was held (%s)", tc.name)
				default:
				}
				if _, err := p.Acquire(context.Background()); !errors.Is(err, shoal.ErrClosed) {
					t.Errorf("Acquire while Close waits: %v, want shoal.ErrClosed", err)
				}
				release()
				<-closed
				if s := p.Stat().Shoal(); s.TotalConns != 0 {
					t.Errorf("after Close: %+v, want no connection left", s)
				}
			})
		})
	}
}
