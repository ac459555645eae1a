package shoalpgx

import (
	"crypto/tls"
	"errors"
	"slices"
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

// hostAddrs lists the host:port of each host of cc, in order.
func hostAddrs(cc *pgx.ConnConfig) []string {
	cfgs := hostConfigs(cc)
	out := make([]string, len(cfgs))
	for i, c := range cfgs {
		out[i] = hostAddr(c)
	}
	return out
}
