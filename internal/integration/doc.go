// Package integration holds the tests that need more than one of shoal's
// modules, or a library only a test uses that is too heavy for an adapter's
// module graph: the live page in a real browser (chromedp), shoalgrpc
// against etcd's generated clients and under otelgrpc, shoalotel's wait
// spans through shoalhttp, shoalpgx behind toxiproxy, with shoalprom's host
// metrics and under sqlx. Kept apart, in a module of its own, so that a
// program importing one adapter never meets these in its module graph. The
// package itself is empty: everything is in its tests.
package integration
