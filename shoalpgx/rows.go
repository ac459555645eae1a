package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// poolRows are the rows of a query run through the pool's API (Pool.Query,
// and Query on a Conn, a Tx or batch results): pgx's rows, with errors that
// match the query's context once it ended (ctxerr.Wrap), and, for
// Pool.Query, the connection they hold until they are closed.
type poolRows struct {
	r    pgx.Rows
	ctx  context.Context // the query's
	pc   *pooledConn     // the connection to release on Close; nil once released, or when the rows hold none
	note *pooledConn     // the connection whose failover hears the rows' error (noteErr); nil once it has, or when it must not
}

// newRows hands out a fresh poolRows for rows read on pc from its block;
// with release set, closing them releases pc, and with note set, their
// error goes to pc.noteErr.
func (pc *pooledConn) newRows(ctx context.Context, r pgx.Rows, release, note bool) *poolRows {
	if len(pc.rows) == 0 {
		pc.rows = make([]poolRows, wrapperBlock)
	}
	rows := &pc.rows[0]
	pc.rows = pc.rows[1:]
	rows.r, rows.ctx, rows.pc, rows.note = r, ctx, nil, nil
	if release {
		rows.pc = pc
	}
	if note {
		rows.note = pc
	}
	return rows
}

// Close closes the rows and, for Pool.Query's, releases the connection.
// Calling it again does nothing.
func (rows *poolRows) Close() {
	rows.r.Close()
	if pc := rows.note; pc != nil {
		rows.note = nil
		pc.noteErr(rows.ctx, rows.r.Err())
	}
	if pc := rows.pc; pc != nil {
		rows.pc = nil
		pc.release()
	}
}

// Err returns the error that ended the rows, if any.
func (rows *poolRows) Err() error { return ctxerr.Wrap(rows.ctx, rows.r.Err()) }

// CommandTag returns the command tag; valid once the rows are closed.
func (rows *poolRows) CommandTag() pgconn.CommandTag { return rows.r.CommandTag() }

// FieldDescriptions describes the columns.
func (rows *poolRows) FieldDescriptions() []pgconn.FieldDescription {
	return rows.r.FieldDescriptions()
}

// Next moves to the next row; after the last one it closes the rows,
// releasing the connection.
func (rows *poolRows) Next() bool {
	if rows.r.Next() {
		return true
	}
	rows.Close()
	return false
}

// Scan reads the current row; an error closes the rows.
func (rows *poolRows) Scan(dest ...any) error {
	err := rows.r.Scan(dest...)
	if err != nil {
		rows.Close()
	}
	return ctxerr.Wrap(rows.ctx, err)
}

// Values returns the current row's values; an error closes the rows.
func (rows *poolRows) Values() ([]any, error) {
	v, err := rows.r.Values()
	if err != nil {
		rows.Close()
	}
	return v, ctxerr.Wrap(rows.ctx, err)
}

// RawValues returns the current row's undecoded values.
func (rows *poolRows) RawValues() [][]byte { return rows.r.RawValues() }

// Conn returns the pgx connection the rows are read from.
func (rows *poolRows) Conn() *pgx.Conn { return rows.r.Conn() }

// TypeMap returns the connection's type map.
func (rows *poolRows) TypeMap() *pgtype.Map { return rows.r.TypeMap() }

// poolRow is the row of a QueryRow run through the pool's API: pgx's row,
// with errors that match the query's context once it ended, and, for
// Pool.QueryRow, the connection it holds until Scan.
type poolRow struct {
	r    pgx.Row
	ctx  context.Context // the query's
	pc   *pooledConn     // the connection to release at Scan; nil once released, or when the row holds none
	note *pooledConn     // as poolRows' note
}

// newRow hands out a fresh poolRow for a row read on pc from its block;
// with release set, Scan releases pc, and with note set, Scan's error goes
// to pc.noteErr.
func (pc *pooledConn) newRow(ctx context.Context, r pgx.Row, release, note bool) *poolRow {
	if len(pc.row) == 0 {
		pc.row = make([]poolRow, wrapperBlock)
	}
	row := &pc.row[0]
	pc.row = pc.row[1:]
	row.r, row.ctx, row.pc, row.note = r, ctx, nil, nil
	if release {
		row.pc = pc
	}
	if note {
		row.note = pc
	}
	return row
}

// Scan reads the row and, for Pool.QueryRow's, releases the connection,
// even when Scan panics (a panicking scanner). A second call returns pgx's
// error for a used row.
func (row *poolRow) Scan(dest ...any) error {
	pc, note := row.pc, row.note
	row.pc, row.note = nil, nil
	if pc != nil {
		defer pc.release()
	}
	err := ctxerr.Wrap(row.ctx, row.r.Scan(dest...))
	if note != nil && err != pgx.ErrNoRows {
		note.noteErr(row.ctx, err)
	}
	return err
}

// errRows are the rows of a Query that failed before it had any.
type errRows struct{ err error }

func (errRows) Close()                                       {}
func (e errRows) Err() error                                 { return e.err }
func (errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (errRows) Next() bool                                   { return false }
func (e errRows) Scan(...any) error                          { return e.err }
func (e errRows) Values() ([]any, error)                     { return nil, e.err }
func (errRows) RawValues() [][]byte                          { return nil }
func (errRows) Conn() *pgx.Conn                              { return nil }
func (errRows) TypeMap() *pgtype.Map                         { return nil }

// errRow is the row of a QueryRow that failed before it had one.
type errRow struct{ err error }

func (e errRow) Scan(...any) error { return e.err }
