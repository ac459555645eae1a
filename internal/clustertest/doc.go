// Package clustertest holds the multi-process tests of a connection budget
// shared through etcd: each test builds the worker program (./worker, a
// shoalpgx pool on a shoaletcd budget), starts four of them against the
// real PostgreSQL and a real etcd on loopback, and counts their
// connections at the server (internal/pgcount, every 20ms), failing on any
// sample above the budget's size N. The scenarios: all busy, one idle,
// join and leave, SIGKILL (short and default TTL), a worker stopped with
// SIGSTOP for three lease lengths, etcd stopped for 5 seconds, and one
// member of a three-member etcd cluster killed. One test runs in the test's
// own process instead: a pipelining shoalpgx pool, whose whole and shared
// connections join the budget as two pools, counted the same way.
//
// The tests need SHOAL_TEST_POSTGRES and SHOAL_TEST_ETCD (scripts/services.sh
// and scripts/test-env.sh) and an etcd binary (internal/etcdtest's rules)
// for the scenarios that hurt etcd, which run throwaway etcds of their own
// so that the shared one is never disturbed. Without them the tests skip,
// unless SHOAL_REQUIRE_SERVICES=1, when they fail. Outside its tests the package
// holds only Report, the line a worker writes.
package clustertest
