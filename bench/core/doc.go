// Package core compares shoal's checkout path with its peers: puddle,
// database/sql, vitess's smartconnpool and a bare buffered channel.
//
// Everything lives in the package's test files; run
//
//	go test -run '^$' -bench . ./core
//
// from bench/, or scripts/bench.sh from the repository root, which also
// regenerates BENCHMARKS.md. See bench_test.go for what each benchmark
// measures and why it is built the way it is.
package core
