package main

import "time"

// envWorker carries a worker's spec (JSON) from the runner to the child
// process it starts; a process that finds it set is a worker.
const envWorker = "SHOAL_BENCH_CLUSTER_WORKER"

// defaultAppName is the application_name of every connection the workers
// open, the one the runner counts at the server, unless -appname says
// otherwise (the test takes one of its own, so that a benchmark running
// beside it is not counted).
const defaultAppName = "shoal-bench-cluster"

// workerSpec is everything a worker process needs to run its part of a cell.
type workerSpec struct {
	Index      int
	Contender  string
	DSN        string // where the worker's pool connects
	MaxConns   int
	AppName    string
	Goroutines int
	// SleepShare is the share of queries that are pg_sleep(0.001) rather
	// than SELECT 1.
	SleepShare float64
	Warmup     time.Duration
	Duration   time.Duration
	Budget     budgetSpec
}

// budgetSpec is the shared budget of the etcd contender.
type budgetSpec struct {
	Endpoints []string
	Name      string // the same for every worker of one cell, new for each cell
	Size      int
}

// workerResult is what a worker sends back on stdout, as one JSON line.
type workerResult struct {
	Index int
	// Queries and Latency cover the measured window only; Errors cover
	// the whole run, warm-up included, since a pool that fails while it
	// fills is what a budget may cause.
	Queries    uint64
	Errors     uint64
	FirstError string
	Latency    histogram
}

// Lines of the handshake between the runner and a worker: the worker says
// ready once its pool answers, the runner says go to all at once.
const (
	lineReady = "ready"
	lineGo    = "go"
)
