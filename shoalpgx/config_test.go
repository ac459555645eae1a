package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

const testBase = "postgres://app:s3cr3t-pw@127.0.0.1:5432/app?sslmode=disable"

func TestParseConfigDefaults(t *testing.T) {
	cfg, err := ParseConfig(testBase)
	if err != nil {
		t.Fatal(err)
	}
	if want := int32(max(4, runtime.NumCPU())); cfg.MaxConns != want {
		t.Errorf("MaxConns = %d, want %d", cfg.MaxConns, want)
	}
	if cfg.MaxConnLifetime != time.Hour || cfg.MaxConnIdleTime != 30*time.Minute || cfg.HealthCheckAfter != time.Second {
		t.Errorf("durations = %s %s %s, want pgxpool's defaults 1h 30m 1s", cfg.MaxConnLifetime, cfg.MaxConnIdleTime, cfg.HealthCheckAfter)
	}
	if cfg.BargeWindow != 4*time.Millisecond {
		t.Errorf("BargeWindow = %s, want the default 4ms", cfg.BargeWindow)
	}
	if cfg.HostConnectTimeout != 2*time.Second {
		t.Errorf("HostConnectTimeout = %s, want the default 2s", cfg.HostConnectTimeout)
	}
	if cfg.MinIdleConns != 0 || cfg.MinConns != 0 || cfg.Partitions != 0 || cfg.MaxWaiters != 0 {
		t.Errorf("counts = %+v, want zeros", cfg)
	}
	// The rest of docs/settings.md's table of shoalpgx's own settings.
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"HealthCheckPeriod", cfg.HealthCheckPeriod, time.Minute},
		{"PingTimeout", cfg.PingTimeout, time.Duration(0)},
		{"CancelTimeout", cfg.CancelTimeout, time.Second},
		{"RoleCheckPeriod", cfg.RoleCheckPeriod, time.Second},
		{"MaxStandbyLag", cfg.MaxStandbyLag, time.Duration(0)},
		{"ReadMaxConns", cfg.ReadMaxConns, int32(0)}, // the pool's MaxConns
		{"Pipeline", cfg.Pipeline, 0},
		{"PipelineFill", cfg.PipelineFill, 800 * time.Microsecond},
		{"MaxConnLifetimeJitter", cfg.MaxConnLifetimeJitter, time.Duration(0)},
		{"LeakThreshold", cfg.LeakThreshold, time.Duration(0)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v by default, want %v", c.field, c.got, c.want)
		}
	}
	if lb := cfg.LoadBalanceHosts; lb != "" && lb != LoadBalanceDisable {
		t.Errorf("LoadBalanceHosts = %q by default, want the hosts in order (disable)", lb)
	}
}

// ConnString gives back the string ParseConfig was given, as pgxpool's
// does, pool_ keys and password included, in both forms and after Copy;
// String still leaves the password out.
func TestConfigConnStringIsTheParsedString(t *testing.T) {
	for _, cs := range []string{
		testBase + "&pool_max_conns=7",
		"host=127.0.0.1 user=app password=s3cr3t-pw dbname=app sslmode=disable pool_max_conns=7",
	} {
		cfg, err := ParseConfig(cs)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ConnString(); got != cs {
			t.Errorf("ConnString() = %q, want %q", got, cs)
		}
		if got := cfg.Copy().ConnString(); got != cs {
			t.Errorf("Copy().ConnString() = %q, want %q", got, cs)
		}
		if strings.Contains(cfg.String(), "s3cr3t-pw") {
			t.Errorf("String() shows the password: %s", cfg.String())
		}
	}
	if got := (&Config{}).ConnString(); got != "" {
		t.Errorf("ConnString of a Config without ConnConfig = %q, want \"\"", got)
	}
}

// MaxConns takes the whole int32 range, as pgxpool's does, in shoalpgx's
// own parsing and checks (the core's limit is its own).
func TestParseConfigMaxConnsUpToMaxInt32(t *testing.T) {
	cfg, err := ParseConfig(testBase + "&pool_max_conns=2147483647")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != math.MaxInt32 {
		t.Fatalf("MaxConns = %d, want %d", cfg.MaxConns, int32(math.MaxInt32))
	}
	// pgxpool users write it to mean no limit (pgx issue #2379): the pool
	// takes it, and allocates only for the connections it opens.
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("NewWithConfig with MaxConns math.MaxInt32: %v", err)
	}
	defer p.Close()
	if got := p.Stat().MaxConns(); got != math.MaxInt32 {
		t.Fatalf("Stat().MaxConns() = %d, want %d", got, int32(math.MaxInt32))
	}
}

// HealthCheckPeriod reaches the core with the socket look as its check,
// and not when HealthCheckAfter turns the look off.
func TestHealthCheckPeriodMapsToTheCore(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  time.Duration
	}{
		{"", time.Minute},
		{"&pool_health_check_period=5s", 5 * time.Second},
		{"&pool_health_check_period=0", 0},
		{"&pool_health_check_period=5s&pool_health_check_after=0", 0},
	} {
		cfg, err := ParseConfig(testBase + tc.extra)
		if err != nil {
			t.Fatal(err)
		}
		p := &Pool{config: cfg}
		core, err := p.coreConfig()
		if err != nil {
			t.Fatal(err)
		}
		if core.HealthCheckPeriod != tc.want {
			t.Errorf("%q: core HealthCheckPeriod %s, want %s", tc.extra, core.HealthCheckPeriod, tc.want)
		}
		if !strings.Contains(cfg.String(), "pool_health_check_period="+cfg.HealthCheckPeriod.String()) {
			t.Errorf("String() = %s, want it to show pool_health_check_period", cfg.String())
		}
	}
}

func TestParseConfigStrictHandoff(t *testing.T) {
	// 0 turns the default barging window off: strict FIFO hand-off.
	cfg, err := ParseConfig(testBase + "&pool_barge_window=0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BargeWindow != 0 {
		t.Fatalf("BargeWindow = %s after pool_barge_window=0, want 0", cfg.BargeWindow)
	}
}

func TestParseConfigPoolKeys(t *testing.T) {
	for _, form := range []string{"url", "keyword"} {
		t.Run(form, func(t *testing.T) {
			settings := []string{
				"pool_max_conns=12", "pool_min_idle=3", "pool_min_conns=2", "pool_partitions=4",
				"pool_max_waiters=100", "pool_max_conn_lifetime=90m", "pool_max_conn_lifetime_jitter=5m",
				"pool_max_conn_idle_time=2m", "pool_health_check_after=250ms", "pool_ping_timeout=3s",
				"pool_health_check_period=10s", "pool_barge_window=2ms", "pool_host_connect_timeout=750ms",
				"pool_role_check_period=300ms",
			}
			var cs string
			if form == "url" {
				cs = testBase + "&" + strings.Join(settings, "&")
			} else {
				cs = "host=127.0.0.1 user=app password=s3cr3t-pw dbname=app sslmode=disable " + strings.Join(settings, " ")
			}
			cfg, err := ParseConfig(cs)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{cfg.MaxConns, cfg.MinIdleConns, cfg.MinConns, cfg.Partitions, cfg.MaxWaiters,
				cfg.MaxConnLifetime, cfg.MaxConnLifetimeJitter, cfg.MaxConnIdleTime, cfg.HealthCheckAfter,
				cfg.PingTimeout, cfg.HealthCheckPeriod, cfg.BargeWindow, cfg.HostConnectTimeout, cfg.RoleCheckPeriod}
			want := []any{int32(12), int32(3), int32(2), 4, 100, 90 * time.Minute, 5 * time.Minute,
				2 * time.Minute, 250 * time.Millisecond, 3 * time.Second, 10 * time.Second, 2 * time.Millisecond,
				750 * time.Millisecond, 300 * time.Millisecond}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("parsed %v, want %v", got, want)
			}
			for key := range cfg.ConnConfig.RuntimeParams {
				if strings.HasPrefix(key, "pool_") {
					t.Errorf("%s left in RuntimeParams: it would be sent to the server", key)
				}
			}
		})
	}
}

func TestParseConfigPgxpoolSpelling(t *testing.T) {
	cfg, err := ParseConfig(testBase + "&pool_min_idle_conns=5")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MinIdleConns != 5 {
		t.Errorf("MinIdleConns = %d, want 5", cfg.MinIdleConns)
	}
	_, err = ParseConfig(testBase + "&pool_min_idle_conns=5&pool_min_idle=4")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "pool_min_idle_conns" {
		t.Errorf("both spellings: err = %v, want a ConfigError naming pool_min_idle_conns", err)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	cases := []struct{ extra, key string }{
		{"pool_max_conns=0", "pool_max_conns"},
		{"pool_max_conns=lots", "pool_max_conns"},
		{"pool_min_idle=-1", "pool_min_idle"},
		{"pool_partitions=x", "pool_partitions"},
		{"pool_max_waiters=-3", "pool_max_waiters"},
		{"pool_max_conn_lifetime=forever", "pool_max_conn_lifetime"},
		{"pool_max_conn_lifetime_jitter=-1s", "pool_max_conn_lifetime_jitter"},
		{"pool_max_conn_idle_time=10", "pool_max_conn_idle_time"},
		{"pool_health_check_after=soon", "pool_health_check_after"},
		{"pool_health_check_period=often", "pool_health_check_period"},
		{"pool_ping_timeout=x", "pool_ping_timeout"},
		{"pool_barge_window=-1ms", "pool_barge_window"},
		{"pool_handoff_after=0", "pool_handoff_after"}, // BargeWindow's old name, gone
		{"pool_host_connect_timeout=-2s", "pool_host_connect_timeout"},
		{"pool_role_check_period=-1s", "pool_role_check_period"},
		{"pool_max_conn=8", "pool_max_conn"},
		{"pool_maxconns=8", "pool_maxconns"},
	}
	for _, c := range cases {
		t.Run(c.extra, func(t *testing.T) {
			_, err := ParseConfig(testBase + "&" + c.extra)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("err = %v, want a ConfigError with Key %q", err, c.key)
			}
			if !strings.Contains(err.Error(), c.key) {
				t.Errorf("error %q does not name %s", err, c.key)
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Errorf("error %q holds the password", err)
			}
		})
	}
}

func TestParseConfigErrorsHideThePassword(t *testing.T) {
	bad := []string{
		"postgres://app:s3cr3t-pw@127.0.0.1:notaport/app",
		"postgres://app:s3cr3t-pw@127.0.0.1:5432/app?sslmode=bogus",
		"postgres://app:s3cr3t-pw@[::1/app",
		"host=127.0.0.1 user=app password=s3cr3t-pw port=notaport",
		"host=127.0.0.1 user=app password='s3cr3t-pw' sslmode=bogus",
		"host=127.0.0.1 user=app password=s3cr3t-pw dbname='unterminated",
	}
	for _, cs := range bad {
		_, err := ParseConfig(cs)
		if err == nil {
			t.Errorf("ParseConfig(%d chars) succeeded, want an error", len(cs))
			continue
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, "s3cr3t-pw") {
				t.Errorf("error shows the password: %s", text)
			}
		}
	}
}

func TestConfigStringHidesThePassword(t *testing.T) {
	cfg, err := ParseConfig(testBase + "&pool_max_conns=9&application_name=billing")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%v|%+v|%#v|%s", cfg, cfg, cfg, cfg)} {
		if strings.Contains(s, "s3cr3t-pw") {
			t.Fatalf("Config printed with its password: %s", s)
		}
	}
	s := cfg.String()
	for _, want := range []string{"host=127.0.0.1", "user=app", "database=app", "password=xxxxx", "pool_max_conns=9", "application_name=billing"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %s, want it to contain %s", s, want)
		}
	}
}

func TestNewWithConfigChecksSettings(t *testing.T) {
	ctx := context.Background()
	if _, err := NewWithConfig(ctx, &Config{}); err == nil {
		t.Error("NewWithConfig accepted a Config not made by ParseConfig")
	}
	cases := []struct {
		key    string
		mutate func(*Config)
		got    string // the value the message must quote
	}{
		{"MaxConns", func(c *Config) { c.MaxConns = 0 }, "must be > 0, got 0"},
		{"MinIdleConns", func(c *Config) { c.MaxConns, c.MinIdleConns = 4, 5 }, "must be <= MaxConns (4), got 5"},
		{"MinConns", func(c *Config) { c.MinConns = -1 }, "must be >= 0 (0 means none kept), got -1"},
		{"MinIdleConns", func(c *Config) { c.MinIdleConns = -1 }, "must be >= 0 (0 means none kept), got -1"},
		{"MaxWaiters", func(c *Config) { c.MaxWaiters = -1 }, "must be >= 0 (0 means no limit), got -1"},
		{"MaxConnLifetime", func(c *Config) { c.MaxConnLifetime = -time.Second }, "must be >= 0 (0 means no limit), got -1s"},
		{"MaxConnLifetimeJitter", func(c *Config) { c.MaxConnLifetimeJitter = -time.Second }, "must be >= 0 (0 means none), got -1s"},
		{"MaxConnIdleTime", func(c *Config) { c.MaxConnIdleTime = -time.Second }, "must be >= 0 (0 means no limit), got -1s"},
		{"HealthCheckAfter", func(c *Config) { c.HealthCheckAfter = -time.Second }, "must be >= 0 (0 turns the checks off), got -1s"},
		{"PingTimeout", func(c *Config) { c.PingTimeout = -time.Second }, "must be >= 0 (0 means no bound of its own), got -1s"},
		{"CancelTimeout", func(c *Config) { c.CancelTimeout = -time.Second }, "must be >= 0 (0 closes the connection at once), got -1s"},
		{"HealthCheckPeriod", func(c *Config) { c.HealthCheckPeriod, c.HealthCheckAfter = -time.Second, 0 }, "must be >= 0 (0 turns it off), got -1s"},
		{"BargeWindow", func(c *Config) { c.BargeWindow = -time.Millisecond }, "must be >= 0 (0 means strict first-come, first-served), got -1ms"},
		{"HostConnectTimeout", func(c *Config) { c.HostConnectTimeout = -time.Second }, "must be >= 0 (0 leaves dials to the connect timeout), got -1s"},
		{"RoleCheckPeriod", func(c *Config) { c.RoleCheckPeriod = -time.Second }, "must be >= 0 (0 turns it off), got -1s"},
		{"MaxStandbyLag", func(c *Config) { c.MaxStandbyLag = -time.Second }, "must be >= 0 (0 means no bound), got -1s"},
		{"ReadMaxConns", func(c *Config) { c.ReadMaxConns = -1 }, "must be >= 0 (0 means the pool's MaxConns), got -1"},
		{"LeakThreshold", func(c *Config) { c.LeakThreshold = -time.Second }, "must be >= 0 (0 turns leak detection off), got -1s"},
		{"Partitions", func(c *Config) { c.Partitions = -1 }, "must be >= 0 (0 lets the core choose), got -1"},
	}
	for _, c := range cases {
		cfg, err := ParseConfig(testBase)
		if err != nil {
			t.Fatal(err)
		}
		c.mutate(cfg)
		_, err = NewWithConfig(ctx, cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != c.key {
			t.Errorf("%s: err = %v, want a ConfigError naming it", c.key, err)
			continue
		}
		if want := "shoalpgx: " + c.key + " " + c.got; err.Error() != want {
			t.Errorf("%s: message %q, want %q", c.key, err, want)
		}
	}
}

func TestLifetimeJitterMapsToPgxpoolInterval(t *testing.T) {
	cfg, err := ParseConfig(testBase + "&pool_max_conn_lifetime=1h&pool_max_conn_lifetime_jitter=10m&pool_health_check_after=0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{config: cfg}
	core, err := p.coreConfig()
	if err != nil {
		t.Fatal(err)
	}
	// pgxpool: [1h, 1h10m], as the core draws it: [MaxLifetime, MaxLifetime+LifetimeJitter].
	if core.MaxLifetime != time.Hour || core.LifetimeJitter != 10*time.Minute {
		t.Errorf("core lifetime %s jitter %s, want 1h and 10m", core.MaxLifetime, core.LifetimeJitter)
	}
	if core.HealthCheck != nil {
		t.Error("pool_health_check_after=0 should turn the acquire ping off")
	}
}

// TestConfigStringMasksOnlyWhereThePasswordIs: a short password is masked
// where it is and nowhere else: not in the application name that holds its
// character, nor in the pool settings' digits.
func TestConfigStringMasksOnlyWhereThePasswordIs(t *testing.T) {
	cfg, err := ParseConfig("postgres://app:1@127.0.0.1:5432/app?pool_max_conns=12&pool_max_conn_lifetime=1h&application_name=job1")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.String()
	for _, want := range []string{"pool_max_conns=12", "pool_max_conn_lifetime=1h0m0s", "application_name=job1", "password=xxxxx"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %s, want it to contain %s", s, want)
		}
	}
}

// TestHostConnectTimeoutZeroLeavesTheConnectTimeout: with several hosts and
// no connect_timeout, HostConnectTimeout bounds each host's part of a dial,
// and 0 leaves it to the connect timeout, 2 minutes when the string sets
// none (docs/settings.md).
func TestHostConnectTimeoutZeroLeavesTheConnectTimeout(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{{0, defaultConnectTimeout}, {3 * time.Second, 3 * time.Second}} {
		cfg, err := ParseConfig("postgres://app@127.0.0.1:5401,127.0.0.1:5402/app")
		if err != nil {
			t.Fatal(err)
		}
		cfg.HostConnectTimeout = c.set
		p := &Pool{config: cfg}
		if got := p.timedConnConfig().ConnectTimeout; got != c.want {
			t.Errorf("HostConnectTimeout %s: each host's connect timeout is %s, want %s", c.set, got, c.want)
		}
	}
}

// A dial is bounded by the string's connect_timeout, and by 2 minutes when
// it sets none (docs/settings.md, DialTimeout): the dials run in the
// background, where nothing else would end one that hangs.
func TestDialBoundIsTheConnectTimeoutOrTwoMinutes(t *testing.T) {
	for _, c := range []struct {
		extra string
		want  time.Duration
	}{{"", 2 * time.Minute}, {"&connect_timeout=5", 5 * time.Second}} {
		cfg, err := ParseConfig(testBase + c.extra)
		if err != nil {
			t.Fatal(err)
		}
		p := &Pool{config: cfg}
		if got := p.timedConnConfig().ConnectTimeout; got != c.want {
			t.Errorf("%q: a dial is bounded by %s, want %s", c.extra, got, c.want)
		}
	}
}

// TestConfigStringShowsEverySetting: String, which the docs offer for logs
// in place of the connection string, shows every pool key ParseConfig
// reads, as the string gave it (pgxpool's spelling of pool_min_idle
// as pool_min_idle).
func TestConfigStringShowsEverySetting(t *testing.T) {
	given := map[string]string{
		"pool_name": "billing", "pool_max_conns": "12", "pool_min_idle": "3", "pool_min_conns": "2",
		"pool_partitions": "4", "pool_max_waiters": "100", "pool_max_conn_lifetime": "1h30m0s",
		"pool_max_conn_lifetime_jitter": "5m0s", "pool_max_conn_idle_time": "2m0s",
		"pool_health_check_after": "250ms", "pool_health_check_period": "10s", "pool_ping_timeout": "3s",
		"pool_cancel_timeout": "1.5s", "pool_barge_window": "2ms", "pool_host_connect_timeout": "750ms",
		"pool_role_check_period": "300ms", "pool_max_standby_lag": "4s", "pool_read_max_conns": "6",
		"pool_pipeline": "16", "pool_pipeline_fill": "900µs",
	}
	cs := testBase
	for _, k := range poolKeys {
		if k.name == "pool_min_idle_conns" {
			continue
		}
		v, ok := given[k.name]
		if !ok {
			t.Fatalf("ParseConfig reads %s, which this test gives no value", k.name)
		}
		cs += "&" + k.name + "=" + url.QueryEscape(v)
	}
	cfg, err := ParseConfig(cs)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.String()
	for k, v := range given {
		if !strings.Contains(s, " "+k+"="+v+" ") && !strings.Contains(s, " "+k+"="+v+"}") {
			t.Errorf("String() = %s\nwant it to show %s=%s", s, k, v)
		}
	}
}

// NewWithConfig (and New) refuse a context that has already ended, as
// docs/from-pgxpool.md says: the pool's background dials run under its
// own context, so an ended one would otherwise pass unnoticed.
func TestNewRefusesAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg, err := ParseConfig(testBase)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := NewWithConfig(ctx, cfg); p != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("NewWithConfig with an ended context: pool %t, %v; want no pool and context.Canceled", p != nil, err)
	}
	if p, err := New(ctx, testBase); p != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("New with an ended context: pool %t, %v; want no pool and context.Canceled", p != nil, err)
	}
}

// The ConfigError docs/operating.md quotes for shoalpgx is the one
// NewWithConfig writes.
func TestConfigErrorInOperatingDoc(t *testing.T) {
	cfg, err := ParseConfig(testBase)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinIdleConns = 16, 20
	_, err = NewWithConfig(context.Background(), cfg)
	doc, rerr := os.ReadFile("../docs/operating.md")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if text := strings.Join(strings.Fields(string(doc)), " "); err == nil || !strings.Contains(text, "`"+err.Error()+"`") {
		t.Errorf("NewWithConfig with MinIdleConns 20 above MaxConns 16: %v, which operating.md does not show", err)
	}
}
