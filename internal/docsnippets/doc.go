// Package docsnippets holds the test that compiles every Go snippet of the
// documentation (README.md, CONTRIBUTING.md and docs/*.md) against the
// repository's modules, so that a snippet cannot go stale while the API
// moves under it. A module of its own, so that the libraries the snippets
// use (etcd's client, Prometheus, OpenTelemetry, gRPC) reach no adapter's
// module graph. The package itself is empty: everything is in its tests.
//
// CONTRIBUTING.md ("Go snippets in the docs") says how a snippet is read.
package docsnippets
