// Package shoalotel reports the metrics of shoal pools through an
// OpenTelemetry MeterProvider, and their waits for a connection as spans
// through a TracerProvider.
//
// The instruments are named, typed and described as the OpenTelemetry
// semantic conventions for database client connection pools say
// (db.client.connection.*, schema SchemaURL): counts and limits are
// observable up-down counters, durations are histograms in seconds, and
// every measurement carries db.client.connection.pool.name. They suit any
// shoal pool, and the pools inside shoalpgx, shoalhttp (one pool name per
// origin: see OriginName) and shoalgrpc. For Prometheus without
// OpenTelemetry, use shoalprom.
//
// # Using it
//
// Create the instruments once per MeterProvider, then give each pool its
// metrics as the pool's Observer. That is all: shoal.New hands the metrics
// the pool's Stats method for the observable instruments (they implement
// shoal.StatsAttacher), and the pool takes it back when it is closed.
//
//	metrics, err := shoalotel.New(provider) // nil: otel.GetMeterProvider()
//	if err != nil { ... }
//
//	orders, err := metrics.Pool("orders-db")
//	if err != nil { ... }
//	cfg := shoal.Config[*Conn]{Dial: dial, MaxConns: 16, MinIdle: 2, Observer: orders}
//	pool, err := shoal.New(cfg)
//	if err != nil { ... }
//	defer orders.Unregister() // when the pool goes away before the process does
//
// shoalprom has the same shape. [New] returns an error for bucket bounds
// shoalprom refuses too (out of increasing order, or not finite), naming
// WithBuckets, whatever the MeterProvider, and when the MeterProvider
// refuses an instrument. [Metrics.Pool] registers a name and returns an error only for a
// name that is not valid UTF-8 or already registered ([ErrDuplicatePool]),
// or when the MeterProvider refuses the pool's callback; an empty name
// never fails, the metrics taking the name of the pool that attaches them.
// [PoolMetrics.Unregister] frees the name and returns nothing:
// the SDK never fails it, a refusal the API allows goes to otel.Handle
// (and a callback the MeterProvider keeps all the same reports nothing
// more), and calling it again does nothing. Attach and AttachHosts return the
// function that undoes them.
//
// To watch a pool with both OpenTelemetry and Prometheus, combine the two
// observers with shoal.MultiObserver.
//
// # Where the numbers come from
//
// The histograms and counters are fed by the pool through the
// shoal.Observer methods of [PoolMetrics], as events happen. Those methods
// run on the pool's hot paths; each is one Record or Add on an SDK
// instrument with an option slice built once in [Metrics.Pool] around a
// precomputed attribute.Set, so no attribute set is built, sorted or
// allocated per event (with the OpenTelemetry SDK and a cumulative reader
// the methods allocate nothing; a measurement with metric.WithAttributes
// built per call would allocate 4 times; with a delta reader the SDK
// allocates for the first measurement of each series after every
// collection, once per series and interval).
//
// The observable instruments are read from the pool's Stats by a callback
// registered per pool, at each collection: nothing is spent on them
// between collections. Until a pool is attached (by shoal.New, or
// [PoolMetrics.Attach]) the up-down counters are not reported for that
// name; shoal.pool.barge_misses, a counter the pool keeps itself, is
// reported from registration, at zero until a pool is attached, and keeps
// the count of a pool that detached (read as it detaches), and of an
// earlier registration of the name. [PoolMetrics.Unregister] removes the
// callback; a pool still open on the unregistered PoolMetrics goes on
// adding to the name's counters and histograms (OpenTelemetry has no way
// to take a series back), where shoalprom drops its events.
//
// # Cost
//
// Each Record or Add goes through the SDK's per-call attribute
// normalization and its exemplar filter, which looks for a span in the
// context, so the two histograms fed per acquire and release cost several
// times the acquire and release themselves (BENCHMARKS.md, "What metrics
// cost"). A MeterProvider built with
// sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter) saves the
// filter's part. Where that matters, shoalprom records the same events
// for a fraction of the cost.
//
// # Instruments
//
// Standard, after the semantic conventions:
//
//	db.client.connection.count             observable up-down counter  {connection}  with db.client.connection.state = idle | used
//	db.client.connection.max               observable up-down counter  {connection}  Config.MaxConns
//	db.client.connection.idle.max          observable up-down counter  {connection}  Config.MaxConns (shoal has no separate idle limit)
//	db.client.connection.idle.min          observable up-down counter  {connection}  Stats.MinIdle (Config.MinIdle, at most MaxConns)
//	db.client.connection.pending_requests  observable up-down counter  {request}     callers waiting in Acquire
//	db.client.connection.timeouts          counter                     {timeout}     acquires whose context ended (deadline or cancel) while they waited
//	db.client.connection.create_time       histogram                   s             each successful dial (with OnConnect)
//	db.client.connection.wait_time         histogram                   s             each successful acquire's wait (0 when a connection was free)
//	db.client.connection.use_time          histogram                   s             each lease, from acquire to release
//
// Extras particular to shoal:
//
//	shoal.pool.leases         observable up-down counter  {lease}       leases held now (more than used connections when multiplexed)
//	shoal.pool.dialing        observable up-down counter  {connection}  dials in flight
//	shoal.pool.budget.share   observable up-down counter  {connection}  Stats.Share: connections the Budget lets the pool hold now (with a Budget only)
//	shoal.pool.budget.demand  observable up-down counter  {connection}  Stats.Demand: connections in use plus waited for (with a Budget only)
//	shoal.pool.budget.members observable up-down counter  {pool}        Stats.BudgetMembers: pools sharing the Budget (with a Budget only)
//	shoal.pool.dial_errors    counter                     {error}       dials that failed (a Budget permit, Dial or OnConnect)
//	shoal.pool.closes         counter                     {connection}  connections closed, with shoal.close.reason = shoal.Reason ("lifetime", "idle", ...)
//	shoal.pool.rejections     counter                     {request}     acquires refused by MaxWaiters or dropped by load shedding
//	shoal.pool.leaks          counter                     {lease}       leases reported held past Config.LeakThreshold
//	shoal.pool.barge_misses   observable counter          {connection}  Stats.BargeMisses: connections a barging release left idle while someone waited (0 without Config.BargeWindow)
//
// Per host, with db.client.connection.pool.name, server.address and
// server.port, for a pool given a hosts function with
// [PoolMetrics.AttachHosts]:
//
//	shoal.pool.host.connection.open       observable up-down counter  {connection}  HostStat.Open: connections open to the host
//	shoal.pool.host.role                  observable up-down counter  {host}        1, with shoal.host.role = HostStat.Role, the host's current role
//	shoal.pool.host.last_check.timestamp  observable gauge            s             HostStat.LastCheck in Unix seconds (none before the first check)
//	shoal.pool.host.lag                   observable gauge            s             HostStat.Lag, replication lag at the last check (none before the first check)
//
// "used" counts connections with at least one lease. A timed-out acquire
// counts in timeouts, not in wait_time (it obtained no connection), and a
// failed dial counts in dial_errors, not in create_time. The histograms'
// bucket boundaries are DefaultBuckets() unless WithBuckets (or a View) says
// otherwise.
//
// Exported to Prometheus by the OpenTelemetry exporter these come out as
// db_client_connection_wait_time_seconds and so on, as from shoalprom, but
// with the label db_client_connection_pool_name where shoalprom says
// pool_name.
//
// # Several servers behind one pool
//
// A pool whose connections go to several servers, such as shoalpgx's with
// several hosts in its connection string, can report each server
// separately: pass its hosts function (shoalpgx's Pool.Hosts) to
// [PoolMetrics.AttachHosts], which, unlike Attach, no pool calls itself.
// The pool's callback calls it at each collection for the per-host
// instruments above. HostStat.Addr is split into the conventions'
// server.address and server.port (an int); an address that is not
// host:port, such as a socket path, goes whole into server.address. The
// role instrument has one point per host, for its current role, so a
// failover shows as a host's point moving from shoal.host.role=standby to
// primary, and summed over hosts it counts the hosts in each role. The
// conventions name no role of a server, so its attribute is shoal's own,
// like shoal.close.reason. Every host adds four points, so the number of
// hosts, like that of pool names, should stay bounded.
//
// # Wait spans
//
// A request that is slow because it queued for a connection can show it in
// its trace. With [WithWaitSpans], for every acquire that waited at least a
// threshold inside a trace, the pool's PoolMetrics record a span named
// shoal.pool.wait, a child of the caller's
// span, from when the acquire began to wait to when it got a connection or
// gave up. It carries db.client.connection.pool.name, and for an acquire
// that failed, error.type (timeout, canceled, closed, exhausted, dial) and
// an error status. The pool hands the caller's context to the observer
// (shoal.WaitTracer) only for acquires that joined the wait queue, so an
// acquire served at once costs nothing more, and an acquire whose context
// carries no span gets no span. shoalpgx, shoalhttp and shoalgrpc pass the
// caller's context (the query's, the request's, the call's) to their pools,
// so the spans appear under it for every adapter.
//
// Wait spans are off unless asked for, so that a program that traces gets
// no new spans on upgrade. A nil provider means the global one:
//
//	metrics, err := shoalotel.New(meters, shoalotel.WithWaitSpans(tracers, shoalotel.DefaultWaitSpanThreshold))
//	metrics, err := shoalotel.New(meters, shoalotel.WithWaitSpans(nil, 5*time.Millisecond))
//
// With wait spans on, the pool also keeps, for each lease, the frame of the
// code that took it (PoolMetrics.Tracing), so that an acquire that times out
// on a full pool, Pool.Holders and /debug/shoal name that code; that costs a
// checkout a short walk of the stack, and without wait spans nothing.
//
// OpenTelemetry's conventions name the pool's metrics but no span for a
// wait; shoal.pool.wait follows their attribute names and nothing else.
//
// # Pool names
//
// The pool name becomes an attribute value, stored by your backend and
// shown on dashboards. It is yours to choose, so never build it from a
// connection string that carries a password (one in a name is masked
// where it stands all the same, as in a pool's Config.Name). [OriginName]
// makes a safe name from a URL (scheme://host:port, with user, password,
// path and query dropped). Every pool name adds a few dozen series, so
// keep the number of names bounded.
//
// Pools that share a name on purpose, such as successive pools of one
// shoalhttp origin that overlap while the old one drains, share one
// PoolMetrics: it is the Observer of each, each attaches itself, and
// their gauges are summed.
package shoalotel
