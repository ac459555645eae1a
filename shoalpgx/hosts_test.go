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
