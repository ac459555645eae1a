// Package pgtest is what the tests of shoalpgx, of its sub-packages and of
// its integration tests share: the test server and its tenant roles, a
// pool opened for one test and closed after it with a check for leaked
// goroutines, bounded waits, and the checks several of them make.
//
// It imports no shoalpgx package, so that shoalpgx's in-package tests can
// use it too; what takes a pool or its config is generic over them:
//
//	pool := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(c *shoalpgx.Config) { c.MaxConns = 2 })
package pgtest
