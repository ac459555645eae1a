// Command cluster measures connection budgets shared by several processes:
// worker processes (this binary, re-executed) run the same load against one
// PostgreSQL under a total of -budget connections (40), and a checker
// counts at the server, every 20ms, how many connections they really hold.
//
// Contenders, one after the other under each load:
//
//   - static: each worker's shoalpgx pool sized by hand to budget/workers
//     (40/4 = 10), as pgx's maintainers advise; a hot worker cannot borrow
//     an idle neighbour's share.
//   - etcd: each worker's shoalpgx pool (-maxconns 32) on one shoaletcd
//     budget of -budget in etcd (-etcd, default $SHOAL_TEST_ETCD), which
//     moves the shares to where the demand is: every worker makes its own
//     etcd client and member (Min -etcd-min 2, IdleTime -etcd-idle, TTL
//     the default), under a budget name new to each cell. The pool closes
//     first, then the member, whose Close revokes its lease (its record
//     and slot keys); the runner then deletes the budget's size key, which
//     has no lease, and fails the cell if any key is left.
//   - pgbouncer: each worker's pgxpool (-maxconns 32) through PgBouncer in
//     transaction mode, whose own pool (40, set in scripts/services.sh and
//     given here as -pgbouncer-pool) is the budget.
//
// Loads (-loads, default uniform,skewed):
//
//   - uniform: every worker runs -goroutines 64.
//   - skewed: worker 0 runs -hot 32 goroutines, each other worker -cold 4.
//     The hot worker's demand is above its static share of 10 and the cold
//     ones' below it, so a budget can lend the hot worker what the cold
//     ones leave idle (max-min fairness: 28 / 4 / 4 / 4), which a static
//     split strands.
//   - skewed-capped: worker 0 with -skew 4
//     times -goroutines (256), the others -goroutines (64). Every worker
//     has more goroutines than its pool's -maxconns 32, so every demand
//     sits at that cap, max-min fairness gives each worker budget/workers,
//     and a budget's shares equal the static split's: this load cannot
//     tell a budget from a static split, and is kept to show that.
//
// Each goroutine loops on Exec of SELECT 1 or SELECT pg_sleep(0.001) (-pause
// 1ms), a -sleep share 0.5 of them the latter; Exec without arguments is one simple-protocol round trip in pgx, the same for
// every contender and safe through PgBouncer. Every connection's
// application_name is shoal-bench-cluster.
//
// The report gives, per load and contender: throughput (all workers, and
// each), p50 and p99 of the callers' latency (the wait for a connection
// included), errors, the most connections seen at the server with the
// samples above the limit, the machine's idle CPU in the window, and the
// workers' own CPU time per query (from their rusage: on a shared machine
// it moves far less than q/s does). For the shoalpgx contenders it also
// gives what each worker's pool Stats said, sampled every 100ms: its
// share against its demand, its connections, its dials, and how soon
// after go the shares settled; -trace writes every sample as CSV, and
// -cpuprofile a CPU profile per worker. Direct connections are counted by their
// application_name over TCP; PgBouncer's server connections as the role's
// backends that came over the Unix socket, which is how services.sh has
// PgBouncer connect, because PgBouncer hands each server connection the
// application_name of whichever client it serves last.
//
// On a small shared machine one run's etcd / static ratio wanders from run
// to run, and a cell can gain or lose by the one run before it, so one run
// cannot judge a ratio near its target. -rounds N (default 1) runs
// every load's cells N times: each round runs every load in turn, the
// contenders in the -contenders order in odd rounds and reversed in even
// ones, so that of any two each runs first in alternate rounds (with three,
// the middle one stays in the middle). The report then gives each round's
// cells and Stats, and per load a table of each round's q/s and ratios
// with their median and spread (least to most); the ratio targets are
// judged on the medians, and the errors and connections at the server on
// every round, one round with an error or above the budget missing it.
// Over several rounds the profiles' names and the -trace lines carry the
// round too.
//
// Run it from bench/ with the servers in the environment
// (scripts/test-env.sh sets them):
//
//	go run ./cluster                              # about 2 minutes
//	go run ./cluster -duration 5s -loads skewed -contenders static,pgbouncer
//	go run ./cluster -loads skewed-capped         # every worker's demand at its cap
//	go run ./cluster -rounds 3                    # about 6 minutes; targets on the medians
//	go run ./cluster -workers 8 -budget 80 -pgbouncer-pool 40 -out results/cluster.md
//
// Every worker is ended with the run: the runner kills them when it is
// interrupted, the kernel when the runner dies (Linux), and a worker exits
// by itself when its stdin, a pipe from the runner, closes.
package main
