package shoaldebug_test

import (
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// TestNameMaskedAfterWords guards a keyword/value connection string that
// follows words of a pool's name: its password is masked even when quoted
// with a space or written "password = pw", and nothing else changes.
func TestNameMaskedAfterWords(t *testing.T) {
	cases := []struct{ name, want string }{
		{"orders host=db password='hunter 2'", "orders host=db password=xxxxx"},
		{"orders host=db password = hunter2", "orders host=db password = xxxxx"},
		{"orders: host=db password='hunter 2' dbname=orders", "orders: host=db password=xxxxx dbname=orders"},
		{"orders host=db url=postgres://app:hunter2@db", "orders host=db url=postgres://app:xxxxx@db"},
		// Not a connection string: left as written.
		{"orders v=1 x", "orders v=1 x"},
		{"orders host=db (primary)", "orders host=db (primary)"},
		{"cache 50% full", "cache 50% full"},
	}
	reg := shoaldebug.NewRegistry()
	for _, c := range cases {
		reg.Register(c.name, func() shoal.Stats { return shoal.Stats{} })
	}
	for i, p := range reg.Snapshot().Pools {
		if p.Name != cases[i].want {
			t.Errorf("name %q shown as %q, want %q", cases[i].name, p.Name, cases[i].want)
		}
	}
}
