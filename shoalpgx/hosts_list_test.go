package shoalpgx

import "testing"

// sslmode=prefer makes pgconn try each host twice; that is still one host.
func TestSeveralHosts(t *testing.T) {
	cases := []struct {
		cs   string
		want bool
	}{
		{"postgres://u:pw@h1:5432/db?sslmode=prefer", false},
		{"postgres://u:pw@h1:5432/db?sslmode=disable", false},
		{"postgres://u:pw@h1:5432,h1:5433/db?sslmode=disable", true},
		{"postgres://u:pw@h1:5432,h2:5432/db?sslmode=prefer", true},
		{"host=h1,h2 port=5432 user=u dbname=db", true},
	}
	for _, c := range cases {
		cfg, err := ParseConfig(c.cs)
		if err != nil {
			t.Fatal(err)
		}
		if got := severalHosts(cfg.ConnConfig); got != c.want {
			t.Errorf("%s: several hosts = %v, want %v", c.cs, got, c.want)
		}
	}
}

// hostConfigs makes one config per host, in order, each with its own
// attempts only.
func TestHostConfigs(t *testing.T) {
	cfg, err := ParseConfig("postgres://u:pw@h1:5432,h2:5433/db?sslmode=prefer")
	if err != nil {
		t.Fatal(err)
	}
	got := hostConfigs(cfg.ConnConfig)
	if len(got) != 2 {
		t.Fatalf("%d configs, want 2", len(got))
	}
	for i, want := range []struct {
		host string
		port uint16
	}{{"h1", 5432}, {"h2", 5433}} {
		c := got[i]
		if c.Host != want.host || c.Port != want.port || c.TLSConfig == nil {
			t.Errorf("config %d: %s:%d (TLS %v), want %s:%d with TLS first", i, c.Host, c.Port, c.TLSConfig != nil, want.host, want.port)
		}
		if len(c.Fallbacks) != 1 || c.Fallbacks[0].Host != want.host || c.Fallbacks[0].TLSConfig != nil {
			t.Errorf("config %d: fallbacks %+v, want the same host without TLS", i, c.Fallbacks)
		}
	}
}
