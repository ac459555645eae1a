package poolmetrics

import (
	"errors"
	"testing"

	"github.com/shoalpool/shoal"
)

// Pools of the same name, a URL whose last parameter is a password, are
// each reported, under name, name-2, name-3: each "-N" must survive the
// masking that Register does, or every try is the name taken.
func TestBindSameURLNames(t *testing.T) {
	const name = "postgres://u@db/x?password=pw"
	r := newRegistry(false)
	tries := 0
	newPool := func(n string) (*Pool, error) {
		if tries++; tries > 10 {
			return nil, errors.New("gave up: every name tried was taken")
		}
		return r.Register(n, nil)
	}
	stats := func() shoal.Stats { return shoal.Stats{Name: name} }
	want := []string{
		"postgres://u@db/x?password=xxxxx",
		"postgres://u@db/x?password=xxxxx&-2",
		"postgres://u@db/x?password=xxxxx&-3",
	}
	for _, w := range want {
		tries = 0
		var d Deferred[Pool]
		p, err := d.Bind(stats, newPool, errDuplicate, nil)
		if err != nil {
			t.Fatalf("Bind: %v, want the metrics named %q", err, w)
		}
		if p.Name() != w {
			t.Errorf("Bind named the metrics %q, want %q", p.Name(), w)
		}
	}
}
