package core

import (
	"fmt"
	"os"
	"testing"
)

// How these benchmarks measure, and why:
//
//   - Every pool holds poolSize (8) connections of a type that does nothing,
//     all opened before timing starts, so what is timed is checkout and
//     return alone. Every pool is driven through the same interface
//     (benchPool), so each pays the same two indirect calls per operation.
//   - One operation is an acquire and a release. Scenarios: serial (one
//     goroutine); par8, par64, par128, par256 (that many goroutines through
//     RunParallel, with SetParallelism so that the count is exact when
//     GOMAXPROCS divides it); and the same with a "work" suffix, where each
//     lease is held for workDuration of calibrated spinning (a CPU loop,
//     not a sleep, so the goroutine keeps its core as real work would).
//   - ns/op and allocs/op come from BenchmarkAcquireRelease/<scenario>/pool=X,
//     whose loop reads no clock at all. The acquire-wait percentiles come
//     from its twin BenchmarkAcquireWait/<scenario>/pool=X, which clocks every acquire
//     (time.Now before, time.Since after) into a per-goroutine histogram
//     with buckets within 3%: no sampling, so p99.9 rests on every
//     operation, and the same code for every pool, so the clock's cost and
//     its effect on contention are the same for all. Its ns/op includes the
//     two clock reads; read ns/op from the unclocked variant.
//   - Serial runs also report cpu-ns/op, the CPU time of the benchmark's
//     own OS thread per operation: steadier than ns/op when other
//     processes load the machine, since descheduled time is left out.
//   - waited/op is the fraction of acquires that found nothing idle and had
//     to wait, by each pool's own counter (read before and after the timed
//     loop, never inside it); the channel keeps no such count.
//   - The sub-benchmark names use key=value for the pool, so
//     `benchstat -col /pool` puts pools side by side per scenario.
//   - Each sub-benchmark opens its own pool and closes it at the end, then
//     waits until every goroutine it started has ended (failing if one has
//     not), so no pool leaves work behind to slow the next.
//   - Every call uses context.Background(): the pools' own cost, without a
//     shared cancellable context whose Done channel all waiters would
//     contend on.

var scenarios = []scenario{
	{name: "serial"},
	{name: "par8", goroutines: 8},
	{name: "par64", goroutines: 64},
	{name: "par128", goroutines: 128},
	{name: "par256", goroutines: 256},
	{name: "par8work", goroutines: 8, work: true},
	{name: "par64work", goroutines: 64, work: true},
	{name: "par256work", goroutines: 256, work: true},
}

var contenders = []contender{
	contenderOf("shoal", openShoal(0)),
	contenderOf("puddle", openPuddle),
	contenderOf("sql", openSQL),
	contenderOf("vitess", openVitess),
	contenderOf("chan", openChan),
}

// BenchmarkAcquireRelease times one acquire and release on each pool, per
// scenario, with no clock read in the loop: ns/op and allocs/op.
func BenchmarkAcquireRelease(b *testing.B) { benchContenders(b, false) }

// BenchmarkAcquireWait is BenchmarkAcquireRelease with every acquire
// clocked: the acquire-wait percentiles p50-ns, p99-ns and p99.9-ns.
func BenchmarkAcquireWait(b *testing.B) { benchContenders(b, true) }

func benchContenders(b *testing.B, recordWaits bool) {
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			for _, c := range contenders {
				b.Run("pool="+c.name, func(b *testing.B) { c.run(b, sc, recordWaits) })
			}
		})
	}
}

// BenchmarkShoalPartitions compares shoal with a single partition against
// the partitioning it picks by default (GOMAXPROCS, at most MaxConns and 16).
func BenchmarkShoalPartitions(b *testing.B) {
	variants := []contender{
		contenderOf("1", openShoal(1)),
		contenderOf("auto", openShoal(0)),
	}
	for _, sc := range []scenario{scenarios[0], scenarios[3]} {
		b.Run(sc.name, func(b *testing.B) {
			for _, v := range variants {
				b.Run("parts="+v.name, func(b *testing.B) { v.run(b, sc, false) })
			}
		})
	}
}

func TestContenders(t *testing.T) {
	for _, c := range contenders {
		t.Run(c.name, c.smoke)
	}
}

func TestMain(m *testing.M) {
	// Calibrate the work spin before anything runs and say what it came
	// to, on a line that benchstat ignores (a configuration line would
	// split its tables whenever two runs calibrate differently).
	fmt.Printf("# work: %v = %d spin iterations\n", workDuration, workSpins())
	os.Exit(m.Run())
}
