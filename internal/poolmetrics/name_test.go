package poolmetrics_test

import (
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/poolmetrics"
)

func TestOriginName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://app:s3cret@db.internal/orders", "postgres://db.internal:5432"},
		{"postgresql://app@DB.Internal:6432/orders?password=s3cret", "postgresql://db.internal:6432"},
		{"HTTPS://User:s3cret@API.example.com", "https://api.example.com:443"},
		{"http://example.com:8080/path?q=1#frag", "http://example.com:8080"},
		{"ws://example.com", "ws://example.com:80"},
		{"wss://example.com", "wss://example.com:443"},
		{"https://[2001:db8::1]/", "https://[2001:db8::1]:443"},
		{"grpc://[2001:db8::1]", "grpc://[2001:db8::1]"},
		{"redis://:s3cret@cache:6379/0", "redis://cache:6379"},
		{"clickhouse://ch", "clickhouse://ch"},
	} {
		got, err := poolmetrics.OriginName("shoaltest", c.in)
		if err != nil || got != c.want {
			t.Errorf("OriginName(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("OriginName(%q) = %q: the password got through", c.in, got)
		}
	}
	for _, in := range []string{
		"host=db user=app password=s3cret",
		"db.internal:5432",
		"/var/run/postgresql",
		"postgres://app:s3cret@db.internal:port/orders",
		"postgres://app:s3cret@db internal/orders",
		"postgres://app:s3cret/x@db/orders", // an unescaped '/' ends the host: "invalid port"
		"postgres://app:4242#s3cret@db/orders",
		"postgres://app:4242?s3cret@db/orders",
		"postgres://app:s3c%ret@db/orders",
		"",
	} {
		got, err := poolmetrics.OriginName("shoaltest", in)
		if err == nil {
			t.Errorf("OriginName(%q) = %q, want an error", in, got)
			continue
		}
		if !strings.HasPrefix(err.Error(), "shoaltest: ") {
			t.Errorf("OriginName(%q): error %q does not name its package", in, err)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "4242") || strings.Contains(err.Error(), "s3c") {
			t.Errorf("OriginName(%q): error %q repeats the password", in, err)
		}
	}
}
