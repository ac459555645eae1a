package shoalotel

import "github.com/shoalpool/shoal/internal/poolmetrics"

// OriginName returns a pool name for the server a URL points at:
// scheme://host:port, lower-cased, with the port filled in for http, https,
// ws, wss and postgres(ql) when the URL leaves it out. The user, password,
// path, query and fragment are dropped, so a connection string's password
// (in its userinfo or in a query parameter such as ?password=) never
// reaches a label. It suits one pool per origin, as shoalhttp keeps; two
// PostgreSQL pools to one server for different databases or users get the
// same name, so name those yourself.
//
// It fails for a string that is not an absolute URL with a host, such as a
// key=value DSN, and for one with an '@' after what the parser took for the
// host (a password with an unescaped '/', '?' or '#'); the error never
// repeats the input.
func OriginName(rawURL string) (string, error) {
	return poolmetrics.OriginName("shoalotel", rawURL)
}
