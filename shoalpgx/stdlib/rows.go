package stdlib

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// sqlRows are a query's rows for database/sql, read from pgx's rows and
// converted column by column (values.go).
type sqlRows struct {
	c    *Conn
	rows pgx.Rows
	ctx  context.Context // the query's, for its errors (ctxerr.Wrap)

	// The first row, read by QueryContext: whether there was one, and
	// whether Next has yet to hand it out.
	firstMore, firstPending bool

	fields   []pgconn.FieldDescription
	names    []string
	decoders []decoder // built on the first Next
}

// newSQLRows reads the first row of rows and returns them, or the query's
// error (the rows closed).
func newSQLRows(ctx context.Context, c *Conn, rows pgx.Rows) (*sqlRows, error) {
	more := rows.Next()
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	// pgconn reuses its field descriptions for the connection's next
	// result: a copy stays right for as long as database/sql asks.
	fields := slices.Clone(rows.FieldDescriptions())
	return &sqlRows{c: c, rows: rows, ctx: ctx, firstMore: more, firstPending: true, fields: fields}, nil
}

// Columns returns the columns' names.
func (r *sqlRows) Columns() []string {
	if r.names == nil {
		r.names = make([]string, len(r.fields))
		for i, f := range r.fields {
			r.names[i] = f.Name
		}
	}
	return r.names
}

// Next converts the next row into dest, or returns io.EOF after the last,
// or the error that ended the rows.
func (r *sqlRows) Next(dest []driver.Value) error {
	var more bool
	if r.firstPending {
		r.firstPending = false
		more = r.firstMore
	} else {
		more = r.rows.Next()
	}
	if !more {
		if err := r.rows.Err(); err != nil {
			return ctxerr.Wrap(r.ctx, err)
		}
		return io.EOF
	}
	if r.decoders == nil {
		m := r.c.conn.TypeMap()
		r.decoders = make([]decoder, len(r.fields))
		for i, f := range r.fields {
			r.decoders[i] = decoderFor(m, f.DataTypeOID, f.Format)
		}
	}
	for i, src := range r.rows.RawValues() {
		if src == nil {
			dest[i] = nil
			continue
		}
		v, err := r.decoders[i](src)
		if err != nil {
			return fmt.Errorf("shoalpgx/stdlib: column %d (%q, %s): %w", i+1, r.fields[i].Name, r.ColumnTypeDatabaseTypeName(i), err)
		}
		dest[i] = v
	}
	return nil
}

// Close closes the rows, reading what is left of them so that the
// connection is free for the next statement, and returns the error that
// ended them, if any.
func (r *sqlRows) Close() error {
	r.rows.Close()
	return ctxerr.Wrap(r.ctx, r.rows.Err())
}
