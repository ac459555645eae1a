package shoalpgx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shoalpool/shoal/internal/connstr"
)

// poolKeyPrefix marks the connection-string keys that configure the pool
// rather than the connection. pgx passes unknown keys on to the server as
// run-time parameters, so every one of them must be taken out here.
const poolKeyPrefix = "pool_"

// poolKey is one connection-string key that ParseConfig understands.
type poolKey struct {
	name  string
	apply func(c *Config, value string) error
}

// poolKeys lists the keys ParseConfig understands, shoal's names first and
// pgxpool's spellings after them.
var poolKeys = []poolKey{
	{"pool_name", func(c *Config, v string) error { c.Name = v; return nil }},
	{"pool_max_conns", func(c *Config, v string) error { return parseInt32(v, 1, &c.MaxConns) }},
	{"pool_min_idle", func(c *Config, v string) error { return parseInt32(v, 0, &c.MinIdleConns) }},
	{"pool_min_idle_conns", func(c *Config, v string) error { return parseInt32(v, 0, &c.MinIdleConns) }},
	{"pool_min_conns", func(c *Config, v string) error { return parseInt32(v, 0, &c.MinConns) }},
	{"pool_partitions", func(c *Config, v string) error { return parseInt(v, 0, &c.Partitions) }},
	{"pool_max_waiters", func(c *Config, v string) error { return parseInt(v, 0, &c.MaxWaiters) }},
	{"pool_max_conn_lifetime", func(c *Config, v string) error { return parseDuration(v, &c.MaxConnLifetime) }},
	{"pool_max_conn_lifetime_jitter", func(c *Config, v string) error { return parseDuration(v, &c.MaxConnLifetimeJitter) }},
	{"pool_max_conn_idle_time", func(c *Config, v string) error { return parseDuration(v, &c.MaxConnIdleTime) }},
	{"pool_health_check_after", func(c *Config, v string) error { return parseDuration(v, &c.HealthCheckAfter) }},
	{"pool_health_check_period", func(c *Config, v string) error { return parseDuration(v, &c.HealthCheckPeriod) }},
	{"pool_ping_timeout", func(c *Config, v string) error { return parseDuration(v, &c.PingTimeout) }},
	{"pool_cancel_timeout", func(c *Config, v string) error { return parseDuration(v, &c.CancelTimeout) }},
	{"pool_barge_window", func(c *Config, v string) error { return parseDuration(v, &c.BargeWindow) }},
	{"pool_host_connect_timeout", func(c *Config, v string) error { return parseDuration(v, &c.HostConnectTimeout) }},
	{"pool_role_check_period", func(c *Config, v string) error { return parseDuration(v, &c.RoleCheckPeriod) }},
	{"pool_max_standby_lag", func(c *Config, v string) error { return parseDuration(v, &c.MaxStandbyLag) }},
	{"pool_read_max_conns", func(c *Config, v string) error { return parseInt32(v, 1, &c.ReadMaxConns) }},
	{"pool_pipeline", func(c *Config, v string) error { return parseInt(v, 0, &c.Pipeline) }},
	{"pool_pipeline_fill", func(c *Config, v string) error { return parseDuration(v, &c.PipelineFill) }},
}

// ParseConfig parses a connection string as pgx.ParseConfig does (URL or
// keyword/value form, environment variables, .pgpass), and takes the pool's
// own keys out of it:
//
//	pool_name                      the pool's name in logs, errors and
//	                               metrics (default host:port/database)
//	pool_max_conns                 integer >= 1 (default max(4, runtime.NumCPU()))
//	pool_min_idle                  integer >= 0 (default 0); pgxpool's
//	                               pool_min_idle_conns is the same key, and
//	                               pool_min_conns sets MinConns (see Config)
//	pool_partitions                integer >= 0 (default 0: the core chooses)
//	pool_max_waiters               integer >= 0 (default 0: unlimited)
//	pool_max_conn_lifetime         duration (default 1h; 0 = no limit)
//	pool_max_conn_lifetime_jitter  duration (default 0)
//	pool_max_conn_idle_time        duration (default 30m; 0 = no limit)
//	pool_health_check_after        duration (default 1s)
//	pool_health_check_period       duration (default 1m; 0 = no background
//	                               look at idle connections; see Config)
//	pool_ping_timeout              duration (default 0: no own bound)
//	pool_cancel_timeout            duration (default 1s; 0 = close the
//	                               connection at once): how long a statement
//	                               whose context ended waits for the server
//	                               to answer its cancel request
//	pool_barge_window              duration (default 4ms; 0 = strict FIFO)
//	pool_host_connect_timeout      duration (default 2s; 0 = the connect
//	                               timeout): each host's bound in a dial
//	                               when the string names several hosts
//	                               and no connect_timeout
//	pool_role_check_period         duration (default 1s; 0 = off): the
//	                               look again at a host's role (see Config)
//	pool_max_standby_lag           duration (default 0: no bound): the read
//	                               pool's bound on a standby's lag
//	pool_read_max_conns            integer >= 1 (default pool_max_conns):
//	                               the read pool's MaxConns
//	pool_pipeline                  integer >= 0 (default 0: off): statements
//	                               in flight on one shared connection (see
//	                               Config.Pipeline)
//	pool_pipeline_fill             duration (default 800µs; 0 = spread
//	                               least-loaded first): the wait a
//	                               pipelined statement may expect behind
//	                               others on a shared connection (see
//	                               Config.PipelineFill)
//
// It also reads libpq's load_balance_hosts (disable or random), which pgx
// does not know and would send to the server as a run-time parameter.
//
// White space around the string is dropped, and a URL's scheme is read in
// any case (POSTGRES://), where pgx would read either string as one
// keyword=value pair and send the URL, password included, to the server
// as a run-time parameter; a keyword that no server parameter could be
// named (one holding ':', '/', '@' or '?') is an error, which does not
// quote it.
//
// Any other key that starts with pool_, a bad value, or pool_min_idle given
// together with pool_min_idle_conns is an error that names the key. A
// string that does not parse, or whose password holds an unescaped '@',
// '#', or '/' or '?' before an '@' (so that a piece of it could be read as
// the host or the database), is an error that shows the string with the
// password replaced by xxxxx where it stands, and nothing else changed;
// the errors do not wrap pgx's, whose ConnString field holds the string
// unmasked.
//
//	postgres://app:secret@db.internal:5432/app?sslmode=verify-full&pool_max_conns=16
//	host=db.internal user=app password=secret dbname=app pool_max_conns=16
func ParseConfig(connString string) (*Config, error) {
	connString = asWritten(connString)
	r := connstr.Read(connString)
	if r.Problem != "" {
		// An ambiguous string (an unescaped '@' or '#' in the password) is
		// refused before pgx reads it: pgx would take a piece of the
		// password for the host or the database and show it in every
		// error and in String.
		return nil, &ConfigError{Reason: parseError(connString, r, nil)}
	}
	cc, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, &ConfigError{Reason: parseError(connString, r, err)}
	}
	// A statement whose context ends is cancelled at the server, and its
	// connection kept (cancel.go); a handler set after ParseConfig wins.
	cc.BuildContextWatcherHandler = buildCanceler
	cfg := defaultConfig(cc)

	params := cc.RuntimeParams
	for key := range params {
		if !isParamName(key) {
			// Not quoted: the keyword may hold a password (a URL
			// whose scheme pgx did not take, read as keyword=value).
			return nil, &ConfigError{Reason: errNotParamName}
		}
	}
	var unknown []string
	for key := range params {
		if strings.HasPrefix(key, poolKeyPrefix) && !slices.ContainsFunc(poolKeys, func(k poolKey) bool { return k.name == key }) {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, &ConfigError{Key: unknown[0], Reason: "is not a pool setting this package knows (known: " + knownKeys() + ")"}
	}
	if _, a := params["pool_min_idle"]; a {
		if _, b := params["pool_min_idle_conns"]; b {
			return nil, &ConfigError{Key: "pool_min_idle_conns", Reason: "is pgxpool's name for pool_min_idle; give one of them"}
		}
	}
	if v, ok := params["load_balance_hosts"]; ok {
		delete(params, "load_balance_hosts")
		if v != LoadBalanceDisable && v != LoadBalanceRandom {
			return nil, &ConfigError{Key: "load_balance_hosts", Reason: fmt.Sprintf("must be disable or random, got %q", v)}
		}
		cfg.LoadBalanceHosts = v
	}
	for _, k := range poolKeys {
		value, ok := params[k.name]
		if !ok {
			continue
		}
		delete(params, k.name)
		if err := k.apply(cfg, value); err != nil {
			return nil, &ConfigError{Key: k.name, Reason: err.Error()}
		}
	}
	return cfg, nil
}

// knownKeys lists poolKeys for an error message.
func knownKeys() string {
	names := make([]string, len(poolKeys))
	for i, k := range poolKeys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func parseInt32(s string, least int32, dst *int32) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || int32(n) < least {
		return fmt.Errorf("must be an integer >= %d, got %q", least, s)
	}
	*dst = int32(n)
	return nil
}

func parseInt(s string, least int, dst *int) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < least {
		return fmt.Errorf("must be an integer >= %d, got %q", least, s)
	}
	*dst = n
	return nil
}

func parseDuration(s string, dst *time.Duration) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("must be a duration >= 0 such as 30s or 1h30m, got %q", s)
	}
	*dst = d
	return nil
}

// ConfigError is the error of ParseConfig and NewWithConfig for a setting
// that cannot work. Key names the connection-string key (such as
// pool_max_conns) or Config field (such as MaxConns) that is wrong; it is
// empty when the connection string as a whole could not be parsed. The
// message never holds the password.
type ConfigError struct {
	Key    string // the key or field, such as "pool_max_conns"; may be empty
	Reason string // what is wrong, with the value given (never a password)
}

// Error returns the message, naming the key or field when there is one.
func (e *ConfigError) Error() string {
	if e.Key == "" {
		return "shoalpgx: " + e.Reason
	}
	return "shoalpgx: " + e.Key + " " + e.Reason
}
