package shoalpgx

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// severalHosts reports whether cc names more than one host:port. pgconn
// lists every attempt of a dial in Fallbacks, and sslmode=prefer or allow
// makes two of each host (with TLS and without), so its length alone
// does not tell.
func severalHosts(cc *pgx.ConnConfig) bool {
	for _, fb := range cc.Fallbacks {
		if fb.Host != cc.Host || fb.Port != cc.Port {
			return true
		}
	}
	return false
}

// hostStagger is how long a dial to a writable host among several waits
// for a host before it tries the next one too. A healthy server answers a
// connect (TCP, startup, SCRAM, the read-write check) in a few
// milliseconds on a LAN and well under this across a WAN; one that
// accepts and never answers (a crashed machine, a partition) would
// otherwise hold the dial for HostConnectTimeout before pgx tried the next
// host.
const hostStagger = 250 * time.Millisecond

// hostConfigs splits cc into one config per host:port, in order, each
// keeping that host's own attempts (pgconn makes two of a host for
// sslmode=prefer or allow).
func hostConfigs(cc *pgx.ConnConfig) []*pgx.ConnConfig {
	type attempt struct {
		host string
		port uint16
		tls  *tls.Config
	}
	all := []attempt{{cc.Host, cc.Port, cc.TLSConfig}}
	for _, fb := range cc.Fallbacks {
		all = append(all, attempt{fb.Host, fb.Port, fb.TLSConfig})
	}
	var out []*pgx.ConnConfig
	for i, a := range all {
		if slices.ContainsFunc(all[:i], func(b attempt) bool { return b.host == a.host && b.port == a.port }) {
			continue // an attempt of a host seen already
		}
		c := cc.Copy()
		c.Host, c.Port, c.TLSConfig = a.host, a.port, a.tls
		c.Fallbacks = nil
		for _, b := range all[i+1:] {
			if b.host == a.host && b.port == a.port {
				c.Fallbacks = append(c.Fallbacks, &pgconn.FallbackConfig{Host: b.host, Port: b.port, TLSConfig: b.tls})
			}
		}
		out = append(out, c)
	}
	return out
}

// staggers reports whether a dial on cc tries its hosts staggered rather
// than one after the other: with several hosts, when at most one of them
// should qualify (target_session_attrs read-write or primary), so that
// which answers first does not change which is used. prefer-standby and
// any keep pgx's order, which is their meaning.
func staggers(cc *pgx.ConnConfig) bool {
	return severalHosts(cc) && wantsWritable(cc.ValidateConnect)
}

// connectStaggered connects to the first host of cc that qualifies, giving
// each host hostStagger before starting on the next as well (and starting
// on the next at once when one fails): the first connection to succeed
// wins, and the others are cancelled, or closed if they succeed too.
// It returns the winner's host:port as the connection string names it.
func connectStaggered(ctx context.Context, cc *pgx.ConnConfig) (*pgx.Conn, string, error) {
	cfgs := hostConfigs(cc)
	type result struct {
		conn *pgx.Conn
		host string
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result, len(cfgs))
	started, pending := 0, 0
	startNext := func() {
		c := cfgs[started]
		started++
		pending++
		go func() {
			conn, err := pgx.ConnectConfig(ctx, c)
			results <- result{conn, net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), err}
		}()
	}
	startNext()
	timer := time.NewTimer(hostStagger)
	defer timer.Stop()
	var errs []error
	for {
		select {
		case r := <-results:
			pending--
			if r.err == nil {
				// The others: cancelled by the deferred cancel; one that
				// connected all the same is closed.
				go func(left int) {
					for range left {
						if late := <-results; late.conn != nil {
							closeCtx, cancel := context.WithTimeout(context.Background(), closeTimeout)
							_ = late.conn.Close(closeCtx)
							cancel()
						}
					}
				}(pending)
				return r.conn, r.host, nil
			}
			errs = append(errs, scrubConnectError(r.err))
			if fatalForAllHosts(r.err) {
				go func(left int) {
					for range left {
						if late := <-results; late.conn != nil {
							_ = late.conn.Close(context.Background())
						}
					}
				}(pending)
				return nil, "", errors.Join(errs...)
			}
			if started < len(cfgs) {
				startNext()
				timer.Reset(hostStagger)
			} else if pending == 0 {
				return nil, "", errors.Join(errs...)
			}
		case <-timer.C:
			if started < len(cfgs) {
				startNext()
				timer.Reset(hostStagger)
			}
		}
	}
}

// fatalForAllHosts reports the errors after which pgx tries no other host:
// a wrong password, a database that does not exist, no right to connect.
func fatalForAllHosts(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "3D000" || pe.Code == "42501")
}

// noteHost resets the pool when a staggered dial lands on another host
// than the one before it: with read-write or primary at most one host
// qualifies, so the primary has moved, and the pool's connections to the
// old one (fenced, demoted, or silent) would take callers' statements
// until each failed on its own. The new connection, not in the pool yet,
// is kept. A dial that started before the move and still lands on the old
// host moves it back; with one primary at a time that cannot happen.
func (p *Pool) noteHost(host string) {
	if prev := p.lastHost.Swap(&host); prev != nil && *prev != host {
		p.Reset()
	}
}
