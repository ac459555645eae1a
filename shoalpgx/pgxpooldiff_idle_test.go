package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// docs/from-pgxpool.md and docs/settings.md: shoalpgx's MaxConnIdleTime 0
// is no limit, where pgxpool's closes every idle connection above MinConns
// at its next health check (its checkConnsHealth compares the idleness
// with the bound, 0 included). The core is given no idle bound at all.
func TestMaxConnIdleTimeZeroIsNoLimit(t *testing.T) {
	cfg := testConfig(t, func(c *Config) { c.MaxConnIdleTime = 0 })
	core, err := (&Pool{config: cfg}).coreConfig()
	if err != nil {
		t.Fatal(err)
	}
	if core.MaxIdleTime != 0 {
		t.Errorf("MaxConnIdleTime 0 gives the core MaxIdleTime %s, want 0, no limit", core.MaxIdleTime)
	}
	cfg.MaxConnIdleTime = -time.Second
	if _, err := NewWithConfig(pgtest.Ctx(t), cfg); err == nil {
		t.Error("NewWithConfig took a negative MaxConnIdleTime, which pgxpool reads as 0; want it refused")
	}
}
