package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// Exec acquires a connection, runs sql on it and releases it. See
// pgx.Conn.Exec.
func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if p.pipe != nil {
		if tag, ok, err := p.pipeExec(ctx, sql, args); ok {
			return tag, err
		}
	}
	pc, err := p.acquire(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer pc.release()
	tag, err := pc.conn.Exec(ctx, sql, args...)
	err = ctxerr.Wrap(ctx, err)
	pc.noteErr(ctx, err)
	return tag, err
}

// Query acquires a connection and runs sql on it. The connection is held
// until the rows are closed: read them to the end or call Close. On error the
// returned rows carry the error too, so it may be handled either way. See
// pgx.Conn.Query.
func (p *Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if p.pipe != nil {
		if rows, ok, err := p.pipeQuery(ctx, sql, args); ok {
			return rows, err
		}
	}
	pc, err := p.acquire(ctx)
	if err != nil {
		return errRows{err: err}, err
	}
	rows, err := pc.conn.Query(ctx, sql, args...)
	if err != nil {
		err = ctxerr.Wrap(ctx, err)
		pc.noteErr(ctx, err)
		pc.release()
		return errRows{err: err}, err
	}
	return pc.newRows(ctx, rows, true, true), nil
}

// QueryRow acquires a connection and runs sql on it. The connection is held
// until Scan is called on the returned row; errors, including a failed
// acquire, come from Scan. See pgx.Conn.QueryRow.
func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if p.pipe != nil {
		if row, ok := p.pipeQueryRow(ctx, sql, args); ok {
			return row
		}
	}
	pc, err := p.acquire(ctx)
	if err != nil {
		return errRow{err: err}
	}
	return pc.newRow(ctx, pc.conn.QueryRow(ctx, sql, args...), true, true)
}

// CopyFrom acquires a connection, copies the rows of src into table on it,
// and releases it. See pgx.Conn.CopyFrom.
func (p *Pool) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	pc, err := p.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer pc.release()
	n, err := pc.conn.CopyFrom(ctx, table, columns, src)
	err = ctxerr.Wrap(ctx, err)
	pc.noteErr(ctx, err)
	return n, err
}

// Ping acquires a connection, checks that it and the server answer, and
// releases it. Use it after New to find out whether the server is reachable.
func (p *Pool) Ping(ctx context.Context) error {
	pc, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer pc.release()
	return ctxerr.Wrap(ctx, pc.ping(ctx))
}
