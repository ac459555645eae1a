// Package shoalprom exports the metrics of shoal pools to Prometheus.
//
// A [Collector] is a prometheus.Collector that watches any number of pools,
// each under a name of your choosing. It follows the OpenTelemetry semantic
// conventions for database connection pools (db.client.connection.*),
// spelled the Prometheus way, so dashboards written for either naming work
// with little change. It does not import OpenTelemetry; see shoalotel for
// that.
//
// # Using it
//
// Register the collector once, then give each pool its metrics as the
// pool's Observer. That is all: shoal.New hands the metrics the pool's
// Stats method for the gauges (they implement shoal.StatsAttacher), and
// the pool takes it back when it is closed.
//
//	collector, err := shoalprom.New(shoalprom.Options{})
//	if err != nil { ... }
//	prometheus.MustRegister(collector)
//
//	metrics, err := collector.Pool("orders-db")
//	if err != nil { ... }
//	cfg := shoal.Config[*Conn]{Dial: dial, MaxConns: 16, MinIdle: 2, Observer: metrics}
//	pool, err := shoal.New(cfg)
//	if err != nil { ... }
//	defer metrics.Unregister() // when the pool goes away before the process does
//
// shoalotel has the same shape. [New] returns an error only for options
// that cannot work (Buckets out of increasing order, a Namespace or
// ConstLabels name that is not ASCII letters, digits and underscores,
// which Prometheus would refuse or store under another name).
// [Collector.Pool] registers a name and returns an error only for a name
// that is not valid UTF-8 or already registered ([ErrDuplicatePool]); an
// empty name never fails, the metrics taking the name of the pool that
// attaches them. [PoolMetrics.Unregister]
// frees the name and returns nothing: it cannot fail, and calling it again
// does nothing. Attach and AttachHosts return the function that undoes
// them.
//
// To watch a pool with both Prometheus and OpenTelemetry, combine the two
// observers with shoal.MultiObserver.
//
// # Where the numbers come from
//
// The histograms and counters are fed by the pool through the
// shoal.Observer methods of [PoolMetrics], as events happen. Those methods
// run on the pool's hot paths, so each is a few atomic operations on
// metric children bound once, in [Collector.Pool]: they take no lock and
// allocate nothing.
//
// The gauges (connections idle and used, waiters, limits) are read from
// the pool's Stats at each scrape, in Collect: nothing is spent on them
// between scrapes. Until a pool is attached (by shoal.New, or
// [PoolMetrics.Attach]) they are not reported for that name.
// shoal_pool_barge_misses_total, a counter the pool keeps itself, is read
// from Stats at each scrape too, but reported from registration, at zero
// until a pool is attached, and it keeps the count of a pool that
// detached.
//
// A histogram observation and a counter increment cost less than the
// acquire and release they record; most of what an acquire+release cycle
// with these metrics adds is the clock the pool reads only when an
// Observer is set (BENCHMARKS.md, "What metrics cost").
//
// # Metrics
//
// All carry the label pool_name. Standard names, after the OpenTelemetry
// conventions (db.client.connection.*); db_client_connection_count keeps
// the conventions' name although Prometheus's linter objects to a gauge
// ending in _count. Pools that share a name are summed, their limits
// (_max, _idle_max, _idle_min) too, so while a shoalhttp origin's old pool
// drains beside its replacement the limit reads double:
//
//	db_client_connection_count{state="idle"|"used"}  gauge      connections open and idle / open with at least one lease
//	db_client_connection_max                         gauge      Config.MaxConns
//	db_client_connection_idle_max                    gauge      Config.MaxConns (shoal has no separate idle limit)
//	db_client_connection_idle_min                    gauge      Stats.MinIdle (Config.MinIdle, at most MaxConns)
//	db_client_connection_pending_requests            gauge      callers waiting in Acquire
//	db_client_connection_timeouts_total              counter    acquires whose context ended (deadline or cancel) while they waited
//	db_client_connection_create_time_seconds         histogram  duration of each successful dial (with OnConnect)
//	db_client_connection_wait_time_seconds           histogram  wait of each successful acquire (0 when a connection was free)
//	db_client_connection_use_time_seconds            histogram  time each lease was held, from acquire to release
//
// Extras particular to shoal:
//
//	shoal_pool_leases                                gauge      leases held now (more than used connections when multiplexed)
//	shoal_pool_dialing                               gauge      dials in flight
//	shoal_pool_budget_share                          gauge      Stats.Share: connections the Budget lets the pool hold now (with a Budget only)
//	shoal_pool_budget_demand                         gauge      Stats.Demand: connections in use plus waited for (with a Budget only)
//	shoal_pool_budget_members                        gauge      Stats.BudgetMembers: pools sharing the Budget (with a Budget only)
//	shoal_pool_dial_errors_total                     counter    dials that failed (a Budget permit, Dial or OnConnect)
//	shoal_pool_closes_total{reason}                  counter    connections closed, by shoal.Reason ("lifetime", "idle", ...)
//	shoal_pool_rejections_total                      counter    acquires refused by MaxWaiters or dropped by load shedding
//	shoal_pool_leaks_total                           counter    leases reported held past Config.LeakThreshold
//	shoal_pool_barge_misses_total                    counter    Stats.BargeMisses: connections a barging release left idle while someone waited (0 without Config.BargeWindow)
//
// Per host, with the labels pool_name and host, for a pool given a hosts
// function with [PoolMetrics.AttachHosts]:
//
//	shoal_pool_host_connection_open                  gauge      HostStat.Open: connections open to the host
//	shoal_pool_host_role{role}                       gauge      1, with HostStat.Role, the host's current role, in the role label
//	shoal_pool_host_last_check_timestamp_seconds     gauge      HostStat.LastCheck in Unix seconds (none before the first check)
//	shoal_pool_host_lag_seconds                      gauge      HostStat.Lag, replication lag at the last check (none before the first check)
//
// Options.Namespace, when set, is put in front of every name
// ("myapp_db_client_connection_count"); it must be ASCII letters, digits
// and underscores, not starting with a digit.
//
// A timed-out acquire counts in timeouts, not in wait_time (it obtained no
// connection), and a failed dial counts in dial_errors, not in create_time.
// When Config.LeakReclaim takes a lease back, the lease's use time is
// recorded then.
//
// # Several servers behind one pool
//
// A pool whose connections go to several servers, such as shoalpgx's with
// several hosts in its connection string, can report each server
// separately: pass its hosts function (shoalpgx's Pool.Hosts) to
// [PoolMetrics.AttachHosts], which, unlike Attach, no pool calls itself.
// At each scrape it is called for the per-host gauges above. The role
// gauge has one series per host, for its current role, so a failover
// shows as a host's series moving from role="standby" to role="primary";
// a query such as shoal_pool_host_role{role="primary"} names the
// primary. Every host adds four series, so the number of hosts, like that
// of pool names, should stay bounded.
//
// # Pool names
//
// The pool name becomes a label value, stored by Prometheus and shown on
// dashboards. It is yours to choose, so never build it from a connection
// string that carries a password (one in a name is masked where it stands
// all the same, as in a pool's Config.Name). [OriginName] makes a safe
// name from a URL (scheme://host:port, with user, password, path and
// query dropped), which also suits shoalhttp's one pool per origin. Every
// pool name adds about 60 series (each histogram has a series per bucket,
// and the closes one per reason), so keep the number of names bounded.
//
// Pools that share a name on purpose, such as successive pools of one
// shoalhttp origin that overlap while the old one drains, share one
// PoolMetrics: it is the Observer of each, each attaches itself, and
// their gauges are summed.
package shoalprom
