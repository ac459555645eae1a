package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/cpuprofile"
	"github.com/shoalpool/shoal/bench/internal/outfile"
)

func main() {
	var (
		etcdAddr  = flag.String("etcd", os.Getenv("SHOAL_TEST_ETCD"), "etcd client address (default $SHOAL_TEST_ETCD; empty skips the etcd scenarios)")
		rounds    = flag.Int("rounds", 2, "interleaved rounds per scenario; the best is kept")
		conns     = flag.Int("conns", 10, "connections for round-robin, and shoalgrpc's MaxConns")
		callers   = flag.Int("callers", 1000, "concurrent callers in the stream-limit scenarios")
		duration  = flag.Duration("duration", 3*time.Second, "measured time of each stream-limit run")
		writers   = flag.Int("writers", 100, "etcd writers (and readers)")
		batches   = flag.Int("batches", 100, "Txn batches per etcd writer")
		batch     = flag.Int("batch", 10, "puts per Txn batch")
		reads     = flag.Int("reads", 10, "Ranges per etcd reader")
		watches   = flag.Int("watches", 1000, "concurrent etcd Watch streams")
		watchWait = flag.Duration("watch-wait", 20*time.Second, "how long to wait for all watches to go live")
		only      = flag.String("only", "", "comma-separated scenarios to run: stream-limit, stream-limit-200, mixed, etcd, watch (default all)")
		out       = flag.String("out", "", "write the markdown fragment here too")
		cpuProf   = flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	)
	flag.Parse()
	if *cpuProf != "" {
		stop, err := cpuprofile.Start(*cpuProf)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	run := func(name string) bool { return *only == "" || strings.Contains(","+*only+",", ","+name+",") }
	cts := contenders(*conns)
	res := results{contenders: cts, callers: *callers, duration: *duration, rounds: *rounds}

	if run("stream-limit") || run("stream-limit-200") || run("mixed") {
		srv, err := startSleepServer(100)
		if err != nil {
			log.Fatal(err)
		}
		for _, sc := range []struct {
			name   string
			length lengthFunc
		}{{"stream-limit", uniform20}, {"stream-limit-200", uniform200}, {"mixed", mixed}} {
			if !run(sc.name) {
				continue
			}
			best := make([]callResult, len(cts))
			for r := range *rounds {
				for _, i := range order(len(cts), r) {
					ct := cts[i]
					cr, err := streamLimit(ct, srv.addr, *callers, *duration, sc.length)
					if err != nil {
						log.Fatalf("%s, %s: %v", sc.name, ct.name, err)
					}
					fmt.Fprintf(os.Stderr, "%-12s %-10s round %d: %8.0f calls/s  1ms-call p50 %v p99 %v  CPU/call %v\n",
						sc.name, ct.name, r+1, cr.perSec, cr.shortP50, cr.shortP99, cr.cpu)
					if cr.perSec > best[i].perSec {
						best[i] = cr
					}
				}
			}
			res.calls = append(res.calls, callRow{scenario: sc.name, byContender: best})
		}
		srv.stop()
	}

	if *etcdAddr != "" && run("etcd") {
		job := etcdJob{writers: *writers, batches: *batches, batchSize: *batch, reads: *reads}
		res.job = job
		best := make([]etcdTimes, len(cts))
		for r := range *rounds {
			for _, i := range order(len(cts), r) {
				ct := cts[i]
				c, err := ct.open(*etcdAddr)
				if err != nil {
					log.Fatal(err)
				}
				prefix := fmt.Sprintf("shoal-bench/grpc/%d/%s/", time.Now().UnixNano(), ct.name)
				t, err := job.run(c, prefix)
				c.Close()
				if err != nil {
					log.Fatalf("etcd, %s: %v", ct.name, err)
				}
				fmt.Fprintf(os.Stderr, "etcd         %-10s round %d: write %v read %v\n", ct.name, r+1,
					t.write.Round(time.Millisecond), t.read.Round(time.Millisecond))
				if best[i].write == 0 || t.write+t.read < best[i].write+best[i].read {
					best[i] = t
				}
			}
		}
		res.etcd = best
	}

	if *etcdAddr != "" && run("watch") {
		res.watches = *watches
		best := make([]watchResult, len(cts))
		for r := range *rounds {
			for _, i := range order(len(cts), r) {
				ct := cts[i]
				c, err := ct.open(*etcdAddr)
				if err != nil {
					log.Fatal(err)
				}
				prefix := fmt.Sprintf("shoal-bench/grpc-watch/%d/", time.Now().UnixNano())
				w, err := watchLive(c, prefix, *watches, time.Second, *watchWait)
				c.Close()
				if err != nil {
					log.Fatalf("watch, %s: %v", ct.name, err)
				}
				all := "never"
				if w.allIn > 0 {
					all = w.allIn.Round(time.Millisecond).String()
				}
				fmt.Fprintf(os.Stderr, "etcd-watch   %-10s round %d: %d of %d live after 1s, all live after %s\n",
					ct.name, r+1, w.live, *watches, all)
				best[i].live = max(best[i].live, w.live)
				if w.allIn > 0 && (best[i].allIn == 0 || w.allIn < best[i].allIn) {
					best[i].allIn = w.allIn
				}
			}
		}
		res.live = best
	}

	cmd := "go run ./grpc " + strings.Join(os.Args[1:], " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, servers on loopback",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version())
	md := res.markdown(cmd, machine)
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			log.Fatal(err)
		}
	}
}

// order is the contenders' order in round r: rotated each round, so that
// none always runs first (on a quiet server) or right after another's
// clean-up.
func order(n, r int) []int {
	out := make([]int, n)
	for k := range out {
		out[k] = (k + r) % n
	}
	return out
}
