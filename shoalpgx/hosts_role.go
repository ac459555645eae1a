package shoalpgx

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// What a host is: a primary, a primary whose sessions refuse writes, or a
// standby with its replay lag, as one query finds it (roleQuery), at a dial
// and at each look again (hosts_recheck.go, hosts_watch.go).

// role is what one look at a server found (roleQuery).
type role struct {
	inRecovery bool          // a standby
	readOnly   bool          // a standby, or a fenced primary (see roleQuery)
	lag        time.Duration // a standby's replay lag (see roleQuery); 0 on a primary
}

// The roles a host can have in HostStat.Role.
const (
	RoleUnknown  = "unknown"   // never looked at (a single host, target_session_attrs unset or any)
	RolePrimary  = "primary"   // takes writes
	RoleReadOnly = "read-only" // a primary whose sessions refuse writes (default_transaction_read_only, a fence)
	RoleStandby  = "standby"   // in recovery: a hot standby
)

// name is r's HostStat.Role.
func (r role) name() string {
	switch {
	case r.inRecovery:
		return RoleStandby
	case r.readOnly:
		return RoleReadOnly
	}
	return RolePrimary
}

// roleQuery asks what the session's server is: a standby (in recovery),
// whether its sessions refuse writes (a standby, or a primary fenced with
// default_transaction_read_only, as a cluster manager demoting it would),
// and, on a standby, how far its replay is behind. The lag is the age of
// the last transaction replayed (or, when it has replayed none since it
// started, of its start: the last one is older) while WAL received is
// still waiting to be replayed, and 0 once everything received is
// replayed: on an idle primary the last transaction's age grows with
// nothing to catch up on. A standby that restarted reports where its
// streaming began as received, behind what it replayed from its own WAL,
// hence <=. What the standby has not received it cannot count, so one cut
// off from its primary reads 0. A fence is read from the value the
// session would go back to (reset_val), set for the server, the database
// or the role, not from the session's own, which a caller may have set
// (SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY) on a server that
// takes writes.
const roleQuery = `SELECT pg_is_in_recovery(),
	pg_is_in_recovery() OR (SELECT reset_val FROM pg_settings WHERE name = 'default_transaction_read_only') = 'on',
	CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() IS NULL OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
	ELSE extract(epoch FROM now() - coalesce(pg_last_xact_replay_timestamp(), pg_postmaster_start_time())) END::float8`

// lagRecheck is how long a look that finds a standby further behind than
// MaxStandbyLag waits before it looks again and believes the second
// reading: right after a write on an idle primary the standby has WAL it
// has not replayed for a few milliseconds, and its last replayed
// transaction may be hours old, which roleQuery would read as hours of lag.
const lagRecheck = 50 * time.Millisecond

// readRole runs roleQuery on pg for p: a second time after lagRecheck when
// the first reading puts a standby past MaxStandbyLag. In the read pool
// the session's own default_transaction_read_only says nothing of the
// server, so a primary there counts as one that takes writes.
func (p *Pool) readRole(ctx context.Context, pg *pgconn.PgConn) (role, error) {
	r, err := readRole(ctx, pg)
	if err == nil && p.maxLag > 0 && r.inRecovery && r.lag > p.maxLag {
		if p.betweenLagReadings != nil {
			p.betweenLagReadings()
		}
		t := time.NewTimer(lagRecheck)
		select {
		case <-t.C:
			r, err = readRole(ctx, pg)
		case <-ctx.Done():
			t.Stop()
			return role{}, ctx.Err() // a reading the pool does not trust is no answer
		}
	}
	if p.target == targetReads {
		r.readOnly = r.inRecovery
	}
	return r, err
}

// readRole runs roleQuery on pg, which may be a connection still being
// set up (pgconn's ValidateConnect runs before pgx wraps it).
func readRole(ctx context.Context, pg *pgconn.PgConn) (role, error) {
	res, err := pg.Exec(ctx, roleQuery).ReadAll()
	if err != nil {
		return role{}, err
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 3 {
		return role{}, fmt.Errorf("shoalpgx: the role query returned an unexpected shape")
	}
	return parseRole(res[0].Rows[0])
}

// parseRole reads roleQuery's row, its values in text.
func parseRole(row [][]byte) (role, error) {
	if len(row) != 3 {
		return role{}, fmt.Errorf("shoalpgx: the role query returned an unexpected shape")
	}
	var lag float64
	if _, err := fmt.Sscan(string(row[2]), &lag); err != nil {
		return role{}, fmt.Errorf("shoalpgx: the role query's lag %q: %w", row[2], err)
	}
	return role{
		inRecovery: string(row[0]) == "t",
		readOnly:   string(row[1]) == "t",
		lag:        time.Duration(lag * float64(time.Second)),
	}, nil
}
