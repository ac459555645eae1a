package shoalpgx

import "testing"

// ReadMaxConns 0 means the pool's MaxConns, and SetMaxConns changes that:
// the read pool follows it, whether it was made before or after, and one
// with a ReadMaxConns of its own keeps it. The test server is a primary,
// which the read pool falls back to.
func TestReadsFollowSetMaxConnsByDefault(t *testing.T) {
	readsMax := func(p *Pool) int32 { return p.Reads().Stat().MaxConns() }
	// The pool's MaxConns as it reports it: with Pipeline (the suite's
	// SHOAL_TEST_PIPELINE), SetMaxConns caps each kind at its half, and
	// the two stay within the MaxConns the pool was made with.
	poolMax := func(p *Pool) int32 { return p.Stat().MaxConns() }

	t.Run("made before", func(t *testing.T) {
		p := newTestPool(t, func(c *Config) { c.MaxConns = 4 })
		if got := readsMax(p); got != 4 {
			t.Fatalf("the read pool's MaxConns %d, want the pool's 4", got)
		}
		if err := p.SetMaxConns(6); err != nil {
			t.Fatal(err)
		}
		if got, want := readsMax(p), poolMax(p); got != want || want == 4 && p.pipe == nil {
			t.Errorf("after SetMaxConns(6): the read pool's MaxConns %d, want the pool's %d", got, want)
		}
	})
	t.Run("made after", func(t *testing.T) {
		p := newTestPool(t, func(c *Config) { c.MaxConns = 4 })
		if err := p.SetMaxConns(6); err != nil {
			t.Fatal(err)
		}
		if got, want := readsMax(p), poolMax(p); got != want || want == 4 && p.pipe == nil {
			t.Errorf("after SetMaxConns(6): the read pool's MaxConns %d, want the pool's %d", got, want)
		}
	})
	t.Run("ReadMaxConns set", func(t *testing.T) {
		p := newTestPool(t, func(c *Config) { c.MaxConns, c.ReadMaxConns = 4, 3 })
		if err := p.SetMaxConns(6); err != nil {
			t.Fatal(err)
		}
		if got := readsMax(p); got != 3 {
			t.Errorf("the read pool's MaxConns %d after the pool's SetMaxConns(6), want its own ReadMaxConns, 3", got)
		}
	})
}
