// Command http measures HTTP request throughput through shoalhttp beside
// the ways Go programs usually talk HTTP, against the same servers in the
// same run:
//
//   - new-client: a new http.Client with a new Transport (a clone of
//     http.DefaultTransport) for every request, closed after it: the
//     anti-pattern of the InfluxDB client the project learned from.
//   - default: one clone of http.DefaultTransport, as most programs use it
//     (at most 2 idle connections per host).
//   - tuned: a clone of http.DefaultTransport with MaxIdleConns and
//     MaxIdleConnsPerHost set to the number of workers.
//   - shoalhttp: shoalhttp.NewTransport(shoalhttp.Options{}), the zero
//     options.
//   - shoal+clientconn: shoal pools of net/http's own connections, made
//     with Go 1.26's Transport.NewClientConn (clientconn.go), at
//     shoalhttp's default sizes: the design weighed against shoalhttp's
//     own HTTP/1.1 client and x/net HTTP/2 (ARCHITECTURE.md).
//
// Targets: ClickHouse over HTTP (GET of SELECT number FROM numbers(5), the
// answer checked), InfluxDB 1.x (a POST of one point per request to
// /write, 204 checked) and an in-process TLS server (net/http with HTTP/2,
// 100 streams per connection; a GET of a short body), each with 1, 4 and
// 32 workers looping one request at a time. Rounds are interleaved (each
// contender once, then again) so that a noisy moment of the shared machine
// hits every contender alike, and the best round of each is kept; each
// round starts one contender further on, so none always runs in the same
// place.
//
// Run it from bench/ with the servers' URLs in SHOAL_TEST_CLICKHOUSE and
// SHOAL_TEST_INFLUXDB (scripts/test-env.sh sets them; a target whose
// variable is unset is skipped):
//
//	go run ./http -rounds 3 -duration 2s -out results/http.md
//
// It prints the tables and writes them, with the machine and the command, as
// a markdown fragment to -out: requests/s best of rounds and paired, this
// process's CPU per request, and the share of the whole machine left idle
// during each run (from /proc/stat). The servers share the machine with the
// client; where it sat near 0% idle, a client can gain only what it saves in
// CPU per request against the servers' share, which is the same for every
// contender.
package main
