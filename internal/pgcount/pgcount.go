// Package pgcount watches how many connections a PostgreSQL server holds
// for someone, from the server's side (pg_stat_activity), while a test or a
// benchmark runs: the one place where a connection budget shared by many
// processes can be checked exactly.
package pgcount

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Queries a Checker can run; each takes one parameter, Config.Arg.
const (
	// CountApplication counts the backends whose application_name is $1.
	CountApplication = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
	// CountSocketUser counts the client backends of role $1 that came
	// over a Unix socket (client_port -1). scripts/services.sh has
	// PgBouncer reach PostgreSQL that way, so that its server connections
	// are counted whatever application_name their last client set.
	CountSocketUser = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND client_port = -1 AND usename = $1"
)

// OwnApplicationName is the application_name of the checker's own
// connection, so that CountApplication never counts it.
const OwnApplicationName = "shoal-pgcount"

// DefaultInterval is how often a Checker samples unless told otherwise:
// short enough to see a burst of connections that lives a few dozen
// milliseconds, long enough to cost the server nothing measurable.
const DefaultInterval = 20 * time.Millisecond

// Config says what a Checker counts, where and how often.
type Config struct {
	// ConnString is the server to watch. The checker opens one connection
	// of its own, with application_name OwnApplicationName.
	ConnString string
	// Query returns one count; empty means CountApplication.
	Query string
	// Arg is the query's $1: the application_name for CountApplication.
	Arg string
	// Interval is the time between samples; 0 means DefaultInterval.
	Interval time.Duration
	// Limit is the most connections allowed: samples above it are listed
	// in Report.Over. 0 means no limit.
	Limit int
}

// Sample is one count and when it was taken.
type Sample struct {
	At    time.Time // when the count was read
	Count int       // the connections counted then
}

// Report is what a Checker saw from Start to Stop.
type Report struct {
	// Max is the largest count of any sample.
	Max int
	// Samples are all the counts, oldest first.
	Samples []Sample
	// Over are the samples above Config.Limit.
	Over []Sample
	// Errors counts the samples that failed.
	Errors int
	// LastErr is the latest failed sample's error; nil when none failed.
	LastErr error
}

// Checker samples a count on its own connection until Stop.
type Checker struct {
	cfg    Config
	pc     *pgx.ConnConfig
	conn   *pgx.Conn // replaced when it breaks; only the sampling goroutine uses it
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	report Report
}

// sampleTimeout bounds one sample, so a stalled server costs a sample, not
// the checker.
const sampleTimeout = time.Second

// Start opens the checker's connection, takes a first sample (so that a
// bad connection string or query fails here) and samples every
// cfg.Interval in the background until Stop.
func Start(ctx context.Context, cfg Config) (*Checker, error) {
	if cfg.Query == "" {
		cfg.Query = CountApplication
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Query == CountApplication && cfg.Arg == OwnApplicationName {
		return nil, fmt.Errorf("pgcount: cannot count application_name %q: it is the checker's own", cfg.Arg)
	}
	pc, err := pgx.ParseConfig(cfg.ConnString)
	if err != nil {
		return nil, fmt.Errorf("pgcount: %w", err)
	}
	pc.RuntimeParams["application_name"] = OwnApplicationName
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("pgcount: connecting: %w", err)
	}
	c := &Checker{cfg: cfg, pc: pc, conn: conn, done: make(chan struct{})}
	if err := c.sample(ctx); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.loop(loopCtx)
	return c, nil
}

// loop samples on a ticker until ctx ends.
func (c *Checker) loop(ctx context.Context) {
	defer close(c.done)
	tick := time.NewTicker(c.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := c.sample(ctx); err != nil && ctx.Err() != nil {
				return
			}
		}
	}
}

// sample takes one count and records it, or the error.
func (c *Checker) sample(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	var n int
	err := c.redial(qctx)
	if err == nil {
		err = c.conn.QueryRow(qctx, c.cfg.Query, c.cfg.Arg).Scan(&n)
	}
	at := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil { // not Stop cutting a sample short
			c.report.Errors++
			c.report.LastErr = err
		}
		return fmt.Errorf("pgcount: sampling: %w", err)
	}
	s := Sample{At: at, Count: n}
	c.report.Samples = append(c.report.Samples, s)
	c.report.Max = max(c.report.Max, n)
	if c.cfg.Limit > 0 && n > c.cfg.Limit {
		c.report.Over = append(c.report.Over, s)
	}
	return nil
}

// redial replaces a connection that broke (the server restarted, a sample
// timed out mid-query), so that one bad moment costs samples, not the
// rest of the run.
func (c *Checker) redial(ctx context.Context) error {
	if !c.conn.IsClosed() {
		return nil
	}
	conn, err := pgx.ConnectConfig(ctx, c.pc)
	if err != nil {
		return err
	}
	c.conn = conn
	return nil
}

// Max returns the largest count seen so far.
func (c *Checker) Max() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report.Max
}

// Last returns the latest sample, or a zero Sample before any.
func (c *Checker) Last() Sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.report.Samples) == 0 {
		return Sample{}
	}
	return c.report.Samples[len(c.report.Samples)-1]
}

// Stop ends the sampling, closes the checker's connection and returns
// what it saw. Call it once.
func (c *Checker) Stop() Report {
	c.cancel()
	<-c.done
	_ = c.conn.Close(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report
}
