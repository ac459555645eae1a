package poolmetrics

import (
	"errors"
	"testing"

	"github.com/shoalpool/shoal"
)

// Pools of the same name are each reported, under name, name-2, name-3,
// even when the name ends where a password's value would take in what
// follows it (a URL's last parameter, a keyword with no value): each
// "-N" must survive the masking that Register does, or every try is the
// name taken.
func TestBindSameNames(t *testing.T) {
	for name, want := range map[string][]string{
		"postgres://u@db/x?password=pw": {
			"postgres://u@db/x?password=xxxxx",
			"postgres://u@db/x?password=xxxxx&-2",
			"postgres://u@db/x?password=xxxxx&-3",
		},
		"orders token=": {"orders token=", "orders token='xxxxx'-2", "orders token='xxxxx'-3"},
		// A trailing backslash escapes whatever follows it into the
		// password's value; a Stats name need not be masked already.
		`orders password=pw\`: {"orders password=xxxxx", "orders password=xxxxx -2", "orders password=xxxxx -3"},
	} {
		r := newRegistry(false)
		tries := 0
		newPool := func(n string) (*Pool, error) {
			if tries++; tries > 10 {
				return nil, errors.New("gave up: every name tried was taken")
			}
			return r.Register(n, nil)
		}
		stats := func() shoal.Stats { return shoal.Stats{Name: name} }
		for _, w := range want {
			tries = 0
			var d Deferred[Pool]
			p, err := d.Bind(stats, newPool, errDuplicate, nil)
			if err != nil {
				t.Errorf("Bind: %v, want the metrics named %q", err, w)
				break
			}
			if p.Name() != w {
				t.Errorf("Bind named the metrics %q, want %q", p.Name(), w)
			}
		}
	}
}
