package shoalpgx

import (
	"crypto/tls"
	"net"
	"slices"
	"strconv"

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

// hostAddrs lists the host:port of each host of cc, in order.
func hostAddrs(cc *pgx.ConnConfig) []string {
	cfgs := hostConfigs(cc)
	out := make([]string, len(cfgs))
	for i, c := range cfgs {
		out[i] = hostAddr(c)
	}
	return out
}

// hostAddr is cc's host:port as the connection string names it.
func hostAddr(cc *pgx.ConnConfig) string {
	return net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
}
