package shoalpgx

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestConfigRefusesWhatPgxpoolTakes guards what docs/from-pgxpool.md says
// of the settings pgxpool takes without a word: a negative pool_ value is
// refused by ParseConfig, naming the key, and a minimum above MaxConns by
// NewWithConfig, naming the field.
func TestConfigRefusesWhatPgxpoolTakes(t *testing.T) {
	const base = "postgres://app:secret@127.0.0.1:1/app?"
	for _, key := range []string{"pool_min_conns=-1", "pool_min_idle_conns=-1", "pool_max_conn_lifetime=-1s",
		"pool_max_conn_idle_time=-1s", "pool_max_conn_lifetime_jitter=-1s", "pool_ping_timeout=-1s", "pool_health_check_period=-1s"} {
		_, err := ParseConfig(base + key)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != strings.Split(key, "=")[0] {
			t.Errorf("ParseConfig with %s: %v, want a *ConfigError naming the key", key, err)
		}
	}
	for key, field := range map[string]string{"pool_max_conns=2&pool_min_conns=5": "MinConns", "pool_max_conns=2&pool_min_idle_conns=5": "MinIdleConns"} {
		cfg, err := ParseConfig(base + key)
		if err != nil {
			t.Fatalf("ParseConfig with %s: %v", key, err)
		}
		p, err := NewWithConfig(context.Background(), cfg)
		if p != nil {
			p.Close()
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != field {
			t.Errorf("NewWithConfig with %s: %v, want a *ConfigError naming %s", key, err, field)
		}
	}
}
