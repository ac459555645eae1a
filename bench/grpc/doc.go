// Command grpc measures gRPC calls through shoalgrpc beside the two ways Go
// programs usually talk to one gRPC server, in the same run:
//
//   - one-conn: a single grpc.ClientConn, as most programs use it. It
//     carries at most the server's stream limit (100 here) at once; grpc-go
//     makes every further call wait for a free stream on it.
//   - rr-N: N grpc.ClientConns picked round-robin per call, blind to load,
//     the way Google's Go client libraries "pool" connections.
//   - shoalgrpc: shoalgrpc.NewClient with MaxConns N and otherwise zero
//     Options: each call goes to the least-loaded connection with a free
//     stream, and waits first come, first served when all are full.
//
// Scenarios:
//
//  1. etcd-write / etcd-read: against etcd (SHOAL_TEST_ETCD), 100 writers
//     each putting batches (Txn of -batch puts) to their own key prefix,
//     then 100 readers each ranging over its writer's prefix -reads times.
//     Whole-job times. etcd shares the machine's cores with the client and is
//     the bottleneck, so the target is no loss against one-conn. The default
//     job (-batches 100: 100,000 keys) is long enough for the noise of a
//     shared machine to average out, which a job of a second is not. With 100
//     callers and 100 streams per connection shoalgrpc needs a single
//     connection (it opens another only when every stream is taken), so it
//     should match one-conn; rr-N spreads the same calls over N.
//  2. stream-limit: an in-process grpc-go server allowing 100 streams per
//     connection whose handler sleeps 20 ms, 1,000 concurrent callers for
//     -duration: calls/s. One connection can finish at most 5,000 calls/s;
//     the target for shoalgrpc is at least 8x that. stream-limit-200: the
//     same with a 200 ms handler (one connection: at most 500 calls/s), at a
//     tenth of the CPU per second, for when the machine's cores, not the
//     stream limit, bound the 20 ms run. mixed: the same with
//     call lengths mixed (10% sleep 200 ms, 90% 1 ms, drawn per call from a
//     fixed seed): calls/s and the p50/p99 latency of the short calls.
//  3. etcd-watch: 1,000 Watch streams opened at once against etcd: how many
//     are live (creation acknowledged) one second after the start, and how
//     long until all are (one-conn: never, it carries 100 at once and the
//     live ones never end). On this machine etcd itself creates about 400
//     watches a second, which bounds the one-second count for everyone.
//
// Rounds are interleaved (every contender, then again, the order rotated
// each round) so that a noisy moment of the shared machine hits each alike;
// the best round is kept.
//
// Run it from bench/ (scripts/test-env.sh sets SHOAL_TEST_ETCD; unset, the
// etcd scenarios are skipped):
//
//	go run ./grpc -rounds 2 -out results/grpc.md
//
// It prints the tables and writes them, with the machine and the command,
// as a markdown fragment to -out.
package main
