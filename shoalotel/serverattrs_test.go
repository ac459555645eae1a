package shoalotel

import (
	"fmt"
	"slices"
	"testing"
)

// TestServerAttrs: a host:port address with a host and a numeric port is
// split into server.address and server.port, an int; any other address
// goes whole into server.address.
func TestServerAttrs(t *testing.T) {
	addrs := []string{"db-a:5432", "[2001:db8::1]:6432", "/var/run/postgresql", "db-d:postgres", ":5432"}
	var got []string
	for _, addr := range addrs {
		var attrs []string
		for _, kv := range serverAttrs(addr) {
			attrs = append(attrs, fmt.Sprintf("%s=%s (%s)", kv.Key, kv.Value.String(), kv.Value.Type()))
		}
		got = append(got, fmt.Sprint(attrs))
	}
	want := []string{
		"[server.address=db-a (STRING) server.port=5432 (INT64)]",
		"[server.address=2001:db8::1 (STRING) server.port=6432 (INT64)]",
		"[server.address=/var/run/postgresql (STRING)]",
		"[server.address=db-d:postgres (STRING)]",
		"[server.address=:5432 (STRING)]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("serverAttrs of %q:\n got %q\nwant %q", addrs, got, want)
	}
}
