// Package pgurl edits the benchmarks' postgres:// connection strings. Its
// errors never quote the string, which holds a password.
package pgurl

import (
	"errors"
	"fmt"
	"net/url"
)

// Edit returns the postgres:// (or postgresql://) connection string cs
// changed by edit. A keyword/value string is refused rather than edited as
// if it were a URL's path.
func Edit(cs string, edit func(u *url.URL)) (string, error) {
	u, err := url.Parse(cs)
	if err != nil {
		// url.Error quotes the whole string; its inner error does not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("not a URL connection string: %v", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", fmt.Errorf("not a postgres:// connection string (scheme %q)", u.Scheme)
	}
	edit(u)
	return u.String(), nil
}

// WithParams returns cs with the query parameters kv (key, value, key,
// value...) set, each replacing any value it had.
func WithParams(cs string, kv ...string) (string, error) {
	return Edit(cs, func(u *url.URL) {
		q := u.Query()
		for i := 0; i+1 < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		u.RawQuery = q.Encode()
	})
}
