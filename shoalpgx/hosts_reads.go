package shoalpgx

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ReadPool sends reads to the standbys of a pool's connection string: Reads
// returns it. It is a pool of its own, on the same hosts and settings,
// whose connections go to a standby that answers and is within
// MaxStandbyLag of its primary (in the string's order, or spread over them
// with load_balance_hosts=random), and to the primary when no standby
// qualifies, back to a standby as soon as one does again.
//
// Writes cannot go through it by mistake: its sessions are opened with
// default_transaction_read_only=on, so that the primary too refuses a write
// sent through it (SQLSTATE 25006), Begin starts read-only transactions,
// BeginTx and SendBatch refuse to begin a read-write one (a BEGIN READ WRITE
// would override the session's default), and it has no Exec or CopyFrom. What it
// reads from a standby may be behind what the pool wrote a moment before:
// read your own writes through the Pool.
type ReadPool struct {
	p *Pool
}

// errReadWriteTx is BeginTx's and SendBatch's error for a read-write
// transaction.
var errReadWriteTx = errors.New("shoalpgx: a ReadPool's transactions are read-only; begin read-write transactions on the Pool")

// beginsReadWrite reports whether sql is a BEGIN or START TRANSACTION that
// asks for READ WRITE, in any case and spacing: on the primary, which the
// read pool falls back to, it overrides default_transaction_read_only.
func beginsReadWrite(sql string) bool {
	s := strings.ToLower(strings.Join(strings.Fields(sql), " "))
	return (strings.HasPrefix(s, "begin") || strings.HasPrefix(s, "start transaction")) && strings.Contains(s, "read write")
}

// Reads returns the pool's read pool, made on the first call: its
// connections are opened as the pool's are, named the pool's Name +
// "/reads", with MaxConns set to
// ReadMaxConns (the pool's MaxConns by default, which SetMaxConns changes
// for the read pool too), MinConns and MinIdleConns
// 0, no Budget, and Config.ReadObserver in place of Observer. With
// Config.Pipeline its Query, QueryRow and SendBatch share connections as
// the pool's do, its MaxConns divided between the two kinds the same way
// (a ReadMaxConns of 1 leaves no room for both: that read pool does not
// pipeline). The pool's Close closes it. Its Stat and Hosts count its own connections, which the
// pool's leave out.
func (p *Pool) Reads() *ReadPool {
	p.readsMu.Lock()
	defer p.readsMu.Unlock()
	if p.reads != nil {
		return p.reads
	}
	cfg := p.config.Copy()
	if cfg.ReadMaxConns > 0 {
		cfg.MaxConns = cfg.ReadMaxConns
	}
	cfg.MinConns, cfg.MinIdleConns = 0, 0
	cfg.Name = readsName(p.config.Name)
	cfg.Budget = nil
	if cfg.MaxConns < 2 {
		cfg.Pipeline = 0 // no room for both kinds: every read gets a whole connection
	}
	cfg.Observer, cfg.ReadObserver = cfg.ReadObserver, nil
	cfg.ConnConfig.ValidateConnect = nil // the read pool's own target decides (hosts_target.go)
	rp, err := newPool(cfg, targetReads)
	if err != nil {
		// The settings are the pool's, checked already; the one that
		// differs, MaxConns, is checked by NewWithConfig too.
		panic("shoalpgx: the read pool's config was refused: " + err.Error())
	}
	if p.readsMax > 0 {
		// Sized as one made before SetMaxConns and resized by it, so
		// that the two are alike (with Pipeline, each kind's half).
		_ = rp.SetMaxConns(p.readsMax) // the pool took this size already
	}
	if p.readsClosed {
		rp.Close()
	}
	p.reads = &ReadPool{p: rp}
	return p.reads
}

// followReads gives the read pool the pool's new MaxConns, n, when
// ReadMaxConns leaves it the pool's, now or when Reads makes it.
func (p *Pool) followReads(n int32) {
	if p.config.ReadMaxConns > 0 || p.target == targetReads {
		return
	}
	p.readsMu.Lock()
	defer p.readsMu.Unlock()
	p.readsMax = n
	if p.reads != nil {
		_ = p.reads.p.SetMaxConns(n) // the pool took this size; a closed read pool has none to take
	}
}

// readOnlySession makes the sessions opened with cc refuse writes until
// they say otherwise, on a standby and on the primary alike.
func readOnlySession(cc *pgx.ConnConfig) {
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["default_transaction_read_only"] = "on"
}

// stillReadOnly reports whether pc's session still refuses writes by
// default, as the server reports it (PostgreSQL 14 and later report
// default_transaction_read_only on every change; an older server reports
// nothing, and its sessions are taken at their word).
func (pc *pooledConn) stillReadOnly() bool {
	v := pc.conn.PgConn().ParameterStatus("default_transaction_read_only")
	return v == "" || v == "on"
}

// closeReads closes the read pool, if any, waiting within ctx as
// Pool.close does, and keeps Reads from making one.
func (p *Pool) closeReads(ctx context.Context) error {
	p.readsMu.Lock()
	r := p.reads
	p.readsClosed = true
	p.readsMu.Unlock()
	if r == nil {
		return nil
	}
	return r.p.close(ctx)
}

// Query runs a query on a read connection, as Pool.Query does.
func (r *ReadPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return r.p.Query(ctx, sql, args...)
}

// QueryRow runs a query that returns at most one row on a read connection,
// as Pool.QueryRow does.
func (r *ReadPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return r.p.QueryRow(ctx, sql, args...)
}

// SendBatch sends a batch of queries on a read connection, as
// Pool.SendBatch does. A batch whose first statement begins a read-write
// transaction (pgx.Batch.BeginTx with pgx.ReadWrite, or a BEGIN READ WRITE
// of its own) is refused, as BeginTx refuses one.
func (r *ReadPool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if len(b.QueuedQueries) > 0 && beginsReadWrite(b.QueuedQueries[0].SQL) {
		return pgx.FailedBatchResults(b, errReadWriteTx)
	}
	return r.p.SendBatch(ctx, b)
}

// Begin starts a read-only transaction on a read connection.
func (r *ReadPool) Begin(ctx context.Context) (pgx.Tx, error) {
	return r.p.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
}

// BeginTx starts a transaction with opts on a read connection. An
// AccessMode of pgx.ReadWrite is refused, as is a BeginQuery (which pgx
// sends in place of the options) that says READ WRITE; an empty one is
// read-only.
func (r *ReadPool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	if beginsReadWrite(opts.BeginQuery) {
		return nil, errReadWriteTx
	}
	switch opts.AccessMode {
	case pgx.ReadWrite:
		return nil, errReadWriteTx
	case "":
		opts.AccessMode = pgx.ReadOnly
	}
	return r.p.BeginTx(ctx, opts)
}

// Acquire returns a read connection, as Pool.Acquire does. Its session is
// read-only (default_transaction_read_only=on); Conn.Host says which host
// it is on and whether that is a standby.
func (r *ReadPool) Acquire(ctx context.Context) (*Conn, error) {
	return r.p.Acquire(ctx)
}

// AcquireFunc acquires a read connection, calls f with it and releases it.
func (r *ReadPool) AcquireFunc(ctx context.Context, f func(*Conn) error) error {
	return r.p.AcquireFunc(ctx, f)
}

// Ping acquires a read connection and pings its server.
func (r *ReadPool) Ping(ctx context.Context) error { return r.p.Ping(ctx) }

// Stat returns the read pool's statistics in pgxpool's shape.
func (r *ReadPool) Stat() *Stat { return r.p.Stat() }

// Reset closes every read connection, as Pool.Reset does the pool's: after
// a credential rotation, say, call both. The pool's own resets (a failover)
// leave the read pool alone, which follows the hosts' roles by itself.
func (r *ReadPool) Reset() { r.p.Reset() }

// Hosts returns what the read pool knows of each host of the connection
// string, in the string's order: its own connections open to it (the
// Pool's are not counted), and each host's role, lag and dial error as
// the read pool last saw them.
func (r *ReadPool) Hosts() []HostStat { return r.p.Hosts() }
