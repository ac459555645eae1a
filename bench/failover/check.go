package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgpair"
)

const createSQL = `CREATE TABLE IF NOT EXISTS failover_writes (
	run    text    NOT NULL,
	worker integer NOT NULL,
	seq    integer NOT NULL
)`

// prepare creates the table on the primary (the standby gets it by
// replication) and returns the server's version.
func prepare(ctx context.Context, primary pgpair.Node) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, primary.ConnString)
	if err != nil {
		return "", fmt.Errorf("connect to the primary %s: %w", primary, err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, createSQL); err != nil {
		return "", err
	}
	var v string
	err = c.QueryRow(ctx, "SELECT 'PostgreSQL ' || current_setting('server_version')").Scan(&v)
	return v, err
}

// check is what the table on the new primary says of a run's writes.
type check struct {
	lost            int // acknowledged, not in the table
	duplicated      int // (worker, seq) in the table more than once
	failedCommitted int // reported failed, in the table
	unknownRows     int // in the table, never attempted
}

type key struct{ worker, seq int }

// checkTable reads the run's rows from the new primary and compares them
// with what the workers were told.
func checkTable(ctx context.Context, newPrimary pgpair.Node, o *outcome) (check, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, newPrimary.ConnString)
	if err != nil {
		return check{}, fmt.Errorf("connect to the new primary %s: %w", newPrimary, err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, "SELECT worker, seq, count(*) FROM failover_writes WHERE run = $1 GROUP BY worker, seq", o.run)
	if err != nil {
		return check{}, err
	}
	found := make(map[key]int)
	for rows.Next() {
		var k key
		var n int
		if err := rows.Scan(&k.worker, &k.seq, &n); err != nil {
			rows.Close()
			return check{}, err
		}
		found[k] = n
	}
	if err := rows.Err(); err != nil {
		return check{}, err
	}
	var ch check
	attempted := make(map[key]bool)
	for w, ws := range o.writes {
		for _, wr := range ws {
			k := key{w, wr.seq}
			attempted[k] = true
			n := found[k]
			if n > 1 {
				ch.duplicated++
			}
			switch {
			case wr.err == nil && n == 0:
				ch.lost++
			case wr.err != nil && n > 0:
				ch.failedCommitted++
			}
		}
	}
	for k := range found {
		if !attempted[k] {
			ch.unknownRows++
		}
	}
	return ch, nil
}
