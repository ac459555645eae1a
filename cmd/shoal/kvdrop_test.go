package main

import (
	"maps"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDropKeywords: the pool keys are taken out of a keyword=value string
// as pgx reads its pairs (quoted values, backslash escapes, spaces around
// '='), and the rest is left as the user wrote it; a string that does not
// read as pairs is returned whole. Where pgx reads the string, it reads
// the result as the string less the pool keys.
func TestDropKeywords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"host=h pool_max_conns=8 dbname=d", "host=h dbname=d"},
		{"pool_max_conns=8 pool_partitions=2", ""},
		{"  host=h  pool_max_conns=8  ", "host=h"},
		{"host=h\n\tpool_max_conns=8\ndbname=d", "host=h\ndbname=d"},
		// Quoted values, with spaces and with what looks like a pool key.
		{"application_name='a pool_max_conns=9' pool_max_conns=8", "application_name='a pool_max_conns=9'"},
		{"pool_max_conns='8' host=h", "host=h"},
		{"host=h pool_max_conns='8 9'", "host=h"},
		{"host=h application_name='x'pool_max_conns=8", "host=h application_name='x'"},
		// Backslash escapes, bare and quoted.
		{`password=a\ pool_max_conns=9 pool_max_conns=8 host=h`, `password=a\ pool_max_conns=9 host=h`},
		{`password='it\'s pool_max_conns=9' pool_max_conns=8`, `password='it\'s pool_max_conns=9'`},
		{`password='a\\' pool_max_conns=8`, `password='a\\'`},
		{`host=h password=a\ `, `host=h password=a\ `},
		{`pool_max_conns=8 password=a\ `, `password=a\ `},
		// Spaces around '='.
		{"host = h pool_max_conns = 8 dbname = d", "host = h dbname = d"},
		{"host=h pool_max_conns =\t8 dbname=d", "host=h dbname=d"},
		// A password with '=' in it.
		{"password=a=b pool_max_conns=8 user=u", "password=a=b user=u"},
		{"password=pool_max_conns=9 user=u", "password=pool_max_conns=9 user=u"},
		// An empty value takes the next word, as pgx reads it.
		{"host=h pool_max_conns= dbname=d", "host=h"},
		{"host=h pool_max_conns=", "host=h"},
		// Keywords are compared as written.
		{"POOL_MAX_CONNS=8 host=h", "POOL_MAX_CONNS=8 host=h"},
		// Not pairs: returned as they are.
		{"host=h application_name='x pool_max_conns=8", "host=h application_name='x pool_max_conns=8"},
		{"host=h pool_max_conns=8 junk", "host=h pool_max_conns=8 junk"},
		{"postgres://u:p@h/db?pool_max_conns=8", "postgres://u:p@h/db?pool_max_conns=8"},
		{"postgres://u:p@h/db", "postgres://u:p@h/db"},
		{"", ""},
		// As pgx reads them: any white space after '=' (a newline too)
		// comes before the value, no keyword holds white space or is
		// empty, and only ASCII white space separates.
		{"host=h pool_max_conns=\n8 dbname=d", "host=h dbname=d"},
		{"host=h pool_max_conns=\r\n8", "host=h"},
		{"pool_max_conns=8 x y=1", "pool_max_conns=8 x y=1"},
		{"=x pool_max_conns=8", "=x pool_max_conns=8"},
		{"\u00a0pool_max_conns=8 host=h", "\u00a0pool_max_conns=8 host=h"},
	} {
		got := dropKeywords(tc.in, "pool_max_conns", "pool_partitions")
		if got != tc.want {
			t.Errorf("dropKeywords(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if strings.Contains(tc.in, "://") {
			continue // a URL is its caller's to edit
		}
		if diff := pgxReadsWithout(tc.in, got, "pool_max_conns", "pool_partitions"); diff != "" {
			t.Errorf("pgx reads %q, less the pool keys, and %q differently: %s", tc.in, got, diff)
		}
	}
}

// pgxReadsWithout returns "" when pgx reads out as it reads in less the
// keys, or when it refuses in; otherwise what differs.
func pgxReadsWithout(in, out string, keys ...string) string {
	a, err := pgconn.ParseConfig(in)
	if err != nil {
		return ""
	}
	b, err := pgconn.ParseConfig(out)
	if err != nil {
		return "the second does not parse: " + err.Error()
	}
	for _, k := range keys {
		delete(a.RuntimeParams, k)
	}
	switch {
	case a.Host != b.Host || a.Port != b.Port:
		return "host"
	case a.Database != b.Database || a.User != b.User:
		return "database or user"
	case a.Password != b.Password:
		return "password"
	case !maps.Equal(a.RuntimeParams, b.RuntimeParams):
		return "runtime parameters"
	}
	return ""
}
