package pgpair

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// FenceAndPromote turns Primary read-only, as a cluster manager demoting
// it would, and promotes Standby: the failover in which a pool's
// connections to the old primary stay healthy but refuse every write.
func (p *Pair) FenceAndPromote(ctx context.Context) error {
	if err := p.SetReadOnly(ctx, p.Primary, true); err != nil {
		return err
	}
	return p.Promote(ctx, p.Standby)
}

// WantFencedWrite fails the test unless err is the refusal of a write by
// a read-only server (SQLSTATE 25006): what the first write after
// FenceAndPromote gets on a connection to the old primary.
func WantFencedWrite(t testing.TB, err error) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("the first write after the fence: %v, want SQLSTATE 25006", err)
	}
}

// WantWritesOnStandby makes eight writes into table (a column n integer)
// after the first, refused, one and fails the test unless each succeeds
// on Standby, the new primary. query runs sql with arg and scans the
// port of the server that ran it into port.
func (p *Pair) WantWritesOnStandby(t testing.TB, table string, query func(sql string, arg int, port *int) error) {
	t.Helper()
	for i := range 8 {
		var port int
		if err := query("INSERT INTO "+table+" VALUES ($1) RETURNING inet_server_port()", i, &port); err != nil {
			t.Fatalf("write %d after the first failed: %v", i+2, err)
		}
		if strconv.Itoa(port) != p.Standby.Port {
			t.Fatalf("write %d went to port %d, want the new primary's %s", i+2, port, p.Standby.Port)
		}
	}
}
