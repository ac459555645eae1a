// Package benchrun runs the cases of a benchmark with a number of workers
// for a warm-up and a measured period, summarises the latencies, and writes
// the results the way Benchee prints them (a table and a comparison block),
// as JSON, as CSV, or as a chart.
//
// It knows nothing about pools or protocols: a Case is a name and a Setup
// that returns the operation to repeat.
package benchrun
