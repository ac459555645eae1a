// Package pgpair drives the PostgreSQL primary/standby pair of the
// high-availability tests and benchmarks: a primary on 127.0.0.1:5441 and a
// synchronous streaming standby of it on 127.0.0.1:5442, two Debian
// clusters that scripts/services.sh creates with this package's pair.sh.
//
// A test gets the pair from ForTest, which reads the servers' addresses from
// SHOAL_TEST_PG_PRIMARY, SHOAL_TEST_PG_STANDBY and SHOAL_TEST_PG_HA
// (scripts/test-env.sh), skips when they are missing (fails under
// SHOAL_REQUIRE_SERVICES=1), holds a lock so that one test binary at a time
// hurts the pair, and puts the pair back when the test ends: every server a
// test stopped is started again, a promoted standby is made a fresh standby
// of 5441 (pg_basebackup), so the next test starts on a healthy pair. The
// test may promote the standby, stop and start either server, bring an old
// primary back as a standby of the promoted one (Rejoin, with pg_rewind),
// fence a running primary read-only with its sessions open (SetReadOnly),
// and make a server silent with a Proxy (accepts connections, then neither
// forwards nor closes them: a crashed machine or a partition, as a client
// sees it).
//
// Proxy needs no pair: it is the one TCP proxy shoalpgx's tests put in
// front of any loopback PostgreSQL to hold, silence, cut or refuse its
// connections.
//
// Controlling the servers takes root (the servers run as postgres) or the
// postgres user; the commands run bounded by their context and fail with
// the end of their output. Everything listens on loopback only.
package pgpair
