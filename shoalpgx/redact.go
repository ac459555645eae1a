package shoalpgx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shoalpool/shoal/internal/connstr"
)

// redacted stands in for a password wherever one would be shown.
const redacted = "xxxxx"

// parseError is the message of a connection string that pgx could not
// parse or that is ambiguous: the string with its password masked where it
// is (see internal/connstr), and the reason. pgx's own text is used for the
// reason only, never for the string: its masking is best effort.
func parseError(connString string, r connstr.Reading, err error) string {
	reason := r.Problem
	if reason == "" {
		reason = err.Error()
		var pce *pgconn.ParseConfigError
		if errors.As(err, &pce) {
			// A copy with the string left out gives pgx's reason alone.
			c := *pce
			c.ConnString = ""
			reason = strings.TrimPrefix(c.Error(), "cannot parse ``: ")
		}
	}
	return "cannot parse connection string " + r.Mask(connString, redacted) + ": " + reason
}

// String describes the config without its password: where it connects, as
// whom, and the pool settings. Use it in logs instead of the connection
// string (or ConnString, which holds the password).
func (c *Config) String() string {
	var b strings.Builder
	b.WriteString("shoalpgx.Config{")
	if cc := c.ConnConfig; cc != nil {
		// The fields are shown as they are: ParseConfig refuses a string
		// whose password could have spilled into them (an unescaped '@'),
		// so a password that happens to equal the user or database name
		// is not a reason to hide those.
		fmt.Fprintf(&b, "host=%s port=%d database=%s user=%s", cc.Host, cc.Port, cc.Database, cc.User)
		if cc.Password != "" {
			b.WriteString(" password=" + redacted)
		}
		if cc.TLSConfig == nil {
			b.WriteString(" tls=off")
		} else {
			b.WriteString(" tls=on")
		}
		for _, fb := range cc.Fallbacks {
			fmt.Fprintf(&b, " fallback=%s:%d", fb.Host, fb.Port)
		}
		if app := cc.RuntimeParams["application_name"]; app != "" {
			b.WriteString(" application_name=" + app)
		}
		b.WriteString(" ")
	}
	if c.Name != "" {
		b.WriteString("pool_name=" + c.Name + " ")
	}
	fmt.Fprintf(&b, "pool_max_conns=%d pool_min_idle=%d pool_min_conns=%d pool_partitions=%d pool_max_waiters=%d "+
		"pool_max_conn_lifetime=%s pool_max_conn_lifetime_jitter=%s pool_max_conn_idle_time=%s "+
		"pool_health_check_after=%s pool_health_check_period=%s pool_ping_timeout=%s pool_cancel_timeout=%s "+
		"pool_barge_window=%s pool_host_connect_timeout=%s pool_role_check_period=%s pool_max_standby_lag=%s "+
		"pool_read_max_conns=%d pool_pipeline=%d pool_pipeline_fill=%s}",
		c.MaxConns, c.MinIdleConns, c.MinConns, c.Partitions, c.MaxWaiters,
		c.MaxConnLifetime, c.MaxConnLifetimeJitter, c.MaxConnIdleTime,
		c.HealthCheckAfter, c.HealthCheckPeriod, c.PingTimeout, c.CancelTimeout,
		c.BargeWindow, c.HostConnectTimeout, c.RoleCheckPeriod, c.MaxStandbyLag,
		c.ReadMaxConns, c.Pipeline, c.PipelineFill)
	return b.String()
}

// GoString is String, so that %#v does not print the config's fields
// either.
func (c *Config) GoString() string { return c.String() }

// connectError is a failed connect without the pgconn.Config (password
// included) that pgconn.ConnectError carries. Its text is pgx's, which
// never holds the password; it unwraps to what the ConnectError wrapped,
// so errors.As still finds a *pgconn.PgError (for example SQLSTATE 28P01,
// a wrong password).
type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// scrubConnectError replaces a *pgconn.ConnectError in err with a
// connectError. Any other error (a hook's own) is returned as it is: where
// a password would sit in the caller's own text cannot be known, and
// replacing every copy of its value would garble the message (a password
// "a" would mask every "a") while letting a transformed copy through.
func scrubConnectError(err error) error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return &connectError{msg: err.Error(), err: ce.Unwrap()}
	}
	return err
}
