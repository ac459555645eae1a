package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// chanPool is the least a pool can be: a buffered channel of open
// connections. Acquire is a receive, release a send; there is no check,
// reset, lifetime, hook or statistic, and a query that fails leaves its
// connection in the channel whatever its state. It is in the benchmark as a
// baseline for what sharing a few connections between many goroutines costs
// in Go on this machine with the least machinery, not as something to use.
type chanPool chan *pgx.Conn

func openChannel(ctx context.Context, dsn string, conns int) (opened, error) {
	ch := make(chanPool, conns)
	closeAll := func() {
		for range len(ch) {
			_ = (<-ch).Close(context.Background())
		}
	}
	for range conns {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			closeAll()
			return opened{}, err
		}
		ch <- c
	}
	return opened{
		worker: func(q query) worker { return pgxWorker(q, func(int) pgxQuerier { return ch }) },
		close:  closeAll,
	}, nil
}

// Query holds a connection until the rows are closed.
func (ch chanPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c := <-ch
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		ch <- c
		return nil, err
	}
	return &chanRows{Rows: rows, release: func() { ch <- c }}, nil
}

// Exec holds a connection for the statement.
func (ch chanPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c := <-ch
	defer func() { ch <- c }()
	return c.Exec(ctx, sql, args...)
}

// QueryRow holds a connection until Scan.
func (ch chanPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c := <-ch
	return chanRow{row: c.QueryRow(ctx, sql, args...), release: func() { ch <- c }}
}

// chanRows gives its connection back once, when closed or read to the end.
type chanRows struct {
	pgx.Rows
	release func()
}

func (r *chanRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

func (r *chanRows) Close() {
	r.Rows.Close()
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// chanRow gives its connection back after Scan.
type chanRow struct {
	row     pgx.Row
	release func()
}

func (r chanRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	r.release()
	return err
}
