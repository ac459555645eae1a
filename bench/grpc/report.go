package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// results are the best rounds of every contender in every scenario run.
type results struct {
	contenders []contender
	callers    int
	duration   time.Duration
	rounds     int

	calls []callRow // stream-limit scenarios

	job  etcdJob
	etcd []etcdTimes // by contender; nil when not run

	watches int
	live    []watchResult // by contender; nil when not run
}

type callRow struct {
	scenario    string
	byContender []callResult
}

// markdown renders the results as a fragment for BENCHMARKS.md, with
// shoalgrpc's ratio to each other contender.
func (r *results) markdown(cmd, machine string) string {
	var b strings.Builder
	last := len(r.contenders) - 1 // shoalgrpc
	names := make([]string, len(r.contenders))
	for i, c := range r.contenders {
		names[i] = c.name
	}
	b.WriteString("### gRPC through shoalgrpc\n\n")
	fmt.Fprintf(&b, "Machine: %s. Best of %d interleaved rounds.\n", machine, r.rounds)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	fmt.Fprintf(&b, "Contenders: %s (see bench/grpc/doc.go).\n\n", strings.Join(names, ", "))

	if len(r.calls) > 0 {
		fmt.Fprintf(&b, "**Stream limit** (in-process server, 100 streams per connection, %d callers, %s per run): calls/s, "+
			"and the latency of the 1 ms calls in the mixed run.\n\n", r.callers, r.duration)
		cols := []string{"scenario"}
		for _, n := range names {
			cols = append(cols, n+" calls/s")
		}
		for _, n := range names[:last] {
			cols = append(cols, "shoalgrpc / "+n)
		}
		cols = append(cols,
			"1 ms calls p50 / p99 ("+strings.Join(names, ", ")+")",
			"CPU µs per call ("+strings.Join(names, ", ")+")")
		mdtable.Header(&b, cols...)
		for _, row := range r.calls {
			fmt.Fprintf(&b, "| %s |", describe(row.scenario))
			for _, c := range row.byContender {
				fmt.Fprintf(&b, " %.0f |", c.perSec)
			}
			for _, c := range row.byContender[:last] {
				fmt.Fprintf(&b, " %.2fx |", row.byContender[last].perSec/c.perSec)
			}
			var lat []string
			for _, c := range row.byContender {
				if c.shortP50 == 0 {
					lat = append(lat, "-")
					continue
				}
				lat = append(lat, fmt.Sprintf("%s / %s", ms(c.shortP50), ms(c.shortP99)))
			}
			fmt.Fprintf(&b, " %s |", strings.Join(lat, "; "))
			var cpu []string
			for _, c := range row.byContender {
				cpu = append(cpu, fmt.Sprintf("%.0f", float64(c.cpu)/float64(time.Microsecond)))
			}
			fmt.Fprintf(&b, " %s |\n", strings.Join(cpu, "; "))
		}
		b.WriteString("\nCPU per call is the whole process's (client and in-process server) user+system time divided by " +
			"the calls completed; with it, the machine's cores bound calls/s at about cores / (CPU per call), " +
			"whatever the connections allow.\n\n")
	}

	if r.etcd != nil {
		j := r.job
		fmt.Fprintf(&b, "**etcd writers and readers** (etcd 3.4 on the same 2 cores, --max-concurrent-streams 100): "+
			"%d writers each put %d Txn batches of %d keys (100-byte values) to their own prefix, "+
			"then %d readers each range over one prefix %d times. Whole-job seconds; ratio = other's time / shoalgrpc's (above 1: shoalgrpc faster).\n\n",
			j.writers, j.batches, j.batchSize, j.writers, j.reads)
		cols := []string{"job"}
		for _, n := range names {
			cols = append(cols, n+" s")
		}
		for _, n := range names[:last] {
			cols = append(cols, n+" / shoalgrpc")
		}
		mdtable.Header(&b, cols...)
		for _, job := range []struct {
			name string
			get  func(etcdTimes) time.Duration
		}{
			{"write", func(t etcdTimes) time.Duration { return t.write }},
			{"read", func(t etcdTimes) time.Duration { return t.read }},
			{"write + read", func(t etcdTimes) time.Duration { return t.write + t.read }},
		} {
			fmt.Fprintf(&b, "| %s |", job.name)
			for _, t := range r.etcd {
				fmt.Fprintf(&b, " %.2f |", job.get(t).Seconds())
			}
			for _, t := range r.etcd[:last] {
				fmt.Fprintf(&b, " %.2fx |", job.get(t).Seconds()/job.get(r.etcd[last]).Seconds())
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}

	if r.live != nil {
		fmt.Fprintf(&b, "**etcd watches**: %d Watch streams opened at once; how many etcd acknowledged within one second, "+
			"and when all of them were live (never: not within the wait, or never possible).\n\n", r.watches)
		b.WriteString("| |")
		for _, n := range names {
			fmt.Fprintf(&b, " %s |", n)
		}
		b.WriteString("\n|---|")
		for range names {
			b.WriteString("---:|")
		}
		b.WriteString("\n| live after 1 s |")
		for _, v := range r.live {
			fmt.Fprintf(&b, " %d |", v.live)
		}
		b.WriteString("\n| all live after |")
		for _, v := range r.live {
			if v.allIn == 0 {
				b.WriteString(" never |")
				continue
			}
			fmt.Fprintf(&b, " %.2f s |", v.allIn.Seconds())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func describe(scenario string) string {
	switch scenario {
	case "stream-limit":
		return "every call 20 ms"
	case "stream-limit-200":
		return "every call 200 ms"
	case "mixed":
		return "mixed: 90% 1 ms, 10% 200 ms"
	}
	return scenario
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
