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
	// SleepShare is the share of queries that are pg_sleep(Pause) rather
	// than SELECT 1.
	SleepShare float64
	Pause      time.Duration
	Warmup     time.Duration
	Duration   time.Duration
	Budget     budgetSpec
	// Profile, when set, is where the worker writes a CPU profile of its
	// run (-cpuprofile).
	Profile string
}

// budgetSpec is the shared budget of the etcd contender.
type budgetSpec struct {
	Endpoints []string
	Name      string // the same for every worker of one cell, new for each cell
	Size      int
	Min       int           // each member's minimum share
	IdleTime  time.Duration // shoaletcd's demand smoothing window; 0 for its default
}

// workerResult is what a worker sends back on stdout, as one JSON line.
type workerResult struct {
	Index int
	// Queries and Latency cover the measured window only; Errors cover
	// the whole run, warm-up included, since a pool that fails while it
	// fills is what a budget may cause.
	Queries    uint64
	AllQueries uint64 // warm-up included: the workers' CPU time is divided by it
	Errors     uint64
	FirstError string
	Latency    histogram
	// Timeline is the pool as sampled every sampleEvery from go to the
	// end of the window: what the budget gave it and what it wanted.
	Timeline []statSample
}

// sampleEvery is how often a worker samples its pool for the timeline.
const sampleEvery = 100 * time.Millisecond

// statSample is one sample of a worker's pool. Share, Demand, Conns,
// Waiting and Dials are the pool's shoal Stats (Conns also pgxpool's
// TotalConns); Fair, Held and Members are shoaletcd's Status, on the etcd
// contender only. Short names: a result line carries a few hundred.
type statSample struct {
	T       time.Duration `json:"t"` // since go
	Share   int           `json:"s"`
	Demand  int           `json:"d"`
	Conns   int           `json:"c"`
	Waiting int           `json:"w"`
	Dials   int64         `json:"n"` // dials so far, over the pool's life
	Fair    int           `json:"f,omitempty"`
	Held    int           `json:"h,omitempty"`
	Members int           `json:"m,omitempty"`
}

// Lines of the handshake between the runner and a worker: the worker says
// ready once its pool answers, the runner says go to all at once.
const (
	lineReady = "ready"
	lineGo    = "go"
)
