package shoalpgx

import "github.com/jackc/pgx/v5"

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
