package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoalpool/shoal/bench/internal/cpuprofile"
	"github.com/shoalpool/shoal/bench/internal/cpustat"
	"github.com/shoalpool/shoal/bench/internal/median"
	"github.com/shoalpool/shoal/bench/internal/outfile"
)

func main() {
	var (
		clickhouseURL = flag.String("clickhouse", os.Getenv("SHOAL_TEST_CLICKHOUSE"), "ClickHouse HTTP URL (default $SHOAL_TEST_CLICKHOUSE; empty skips it)")
		influxURL     = flag.String("influxdb", os.Getenv("SHOAL_TEST_INFLUXDB"), "InfluxDB 1.x URL with database shoal_test (default $SHOAL_TEST_INFLUXDB; empty skips it)")
		workers       = flag.String("workers", "1,4,32", "worker counts, comma-separated")
		rounds        = flag.Int("rounds", 3, "interleaved rounds per cell; the best is kept")
		duration      = flag.Duration("duration", 2*time.Second, "length of one round")
		only          = flag.String("only", "", "run only these targets (ClickHouse, InfluxDB, TLS), comma-separated")
		out           = flag.String("out", "", "write the markdown fragment here")
		contenderList = flag.String("contenders", "", "run only these contenders, comma-separated (for profiling)")
		cpuProfile    = flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
		mutexProfile  = flag.String("mutexprofile", "", "write a mutex contention profile of the whole run here")
	)
	flag.Parse()
	if *cpuProfile != "" {
		stop, err := cpuprofile.Start(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
		defer func() {
			f, err := os.Create(*mutexProfile)
			if err != nil {
				log.Print(err)
				return
			}
			defer f.Close()
			pprof.Lookup("mutex").WriteTo(f, 0)
		}()
	}
	if *contenderList != "" {
		var keep []contender
		for _, c := range contenders {
			if selected(*contenderList, c.name) {
				keep = append(keep, c)
			}
		}
		contenders = keep
	}
	loadAtStart := loadAverage()
	counts, err := parseCounts(*workers)
	if err != nil {
		log.Fatal(err)
	}
	var targets []*target
	if *clickhouseURL != "" {
		targets = append(targets, clickhouse(*clickhouseURL))
	}
	if *influxURL != "" {
		targets = append(targets, influxdb(*influxURL))
	}
	targets = append(targets, tlsServer())
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()

	res := results{contenders: contenders}
	for _, tg := range targets {
		if *only != "" && !selected(*only, tg.name) {
			continue
		}
		for _, n := range counts {
			best := make([]float64, len(contenders))
			cpu := make([][]float64, len(contenders))
			idle := make([][]float64, len(contenders))
			perRound := make([][]float64, *rounds) // req/s by round, then contender
			for r := range *rounds {
				perRound[r] = make([]float64, len(contenders))
				for k := range contenders {
					// Each round starts one contender further on, so that
					// no contender always runs in the same place.
					i := (k + r) % len(contenders)
					c := contenders[i]
					m, err := measure(c, tg, n, *duration)
					if err != nil {
						log.Printf("%s, %s, %d workers: %v", tg.name, c.name, n, err)
						return
					}
					best[i] = max(best[i], m.rps)
					perRound[r][i] = m.rps
					cpu[i] = append(cpu[i], m.cpuPerReq)
					if m.idle >= 0 {
						idle[i] = append(idle[i], m.idle)
					}
					fmt.Fprintf(os.Stderr, "%-26s %-10s %2d workers round %d: %8.0f req/s, %6.1f µs CPU/req, %3.0f%% machine idle\n", tg.name, c.name, n, r+1, m.rps, m.cpuPerReq, 100*m.idle)
				}
			}
			cpuMedians := make([]float64, len(contenders))
			idleMedians := make([]float64, len(contenders))
			for i := range cpu {
				cpuMedians[i] = median.Of(cpu[i])
				idleMedians[i] = -1
				if len(idle[i]) > 0 {
					idleMedians[i] = median.Of(idle[i])
				}
			}
			res.rows = append(res.rows, row{target: tg.name, workers: n, rps: best, cpu: cpuMedians,
				idle: idleMedians, pairedRatio: pairedRatios(perRound)})
		}
	}

	cmd := "go run ./http " + strings.Join(os.Args[1:], " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, servers on loopback; load average at start %s, at end %s",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), loadAtStart, loadAverage())
	md := res.markdown(cmd, machine, *rounds, *duration)
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			log.Fatal(err)
		}
	}
}

// measurement is one round of one contender.
type measurement struct {
	rps       float64 // requests per second
	cpuPerReq float64 // microseconds of this process's CPU (user+system) per request
	// idle is the share of the whole machine's CPU time that went unused
	// during the run, or -1 where /proc/stat cannot be read. Client and
	// servers share the machine: near 0, the machine was saturated, and a
	// client can gain only what it saves in CPU per request.
	idle float64
}

// measure opens c, warms it with an unmeasured run, runs n workers for d
// and returns the requests per second and this process's CPU time per
// request (the client's cost, plus the TLS server's when it is the target).
func measure(c contender, tg *target, n int, d time.Duration) (measurement, error) {
	client, closeAll, err := c.open(n, tg.tls)
	if err != nil {
		return measurement{}, err
	}
	defer closeAll()
	ctx := context.Background()
	if _, _, err := runFor(ctx, n, 100*time.Millisecond, client, tg); err != nil {
		return measurement{}, err
	}
	machine := cpustat.Start()
	cpu0 := processCPU()
	rps, count, err := runFor(ctx, n, d, client, tg)
	cpu := processCPU() - cpu0
	m := measurement{rps: rps, idle: machine.IdleShare()}
	if count > 0 {
		m.cpuPerReq = float64(cpu.Microseconds()) / float64(count)
	}
	return m, err
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pairedRatios returns, for every contender but the last (shoalhttp), the
// median over the rounds of the last one's req/s divided by that
// contender's in the same round. Pairing within a round cancels the
// machine's slow swings in load, which best-of can pair a lucky round of
// one contender with an unlucky one of another.
func pairedRatios(perRound [][]float64) []float64 {
	if len(perRound) == 0 {
		return nil
	}
	last := len(perRound[0]) - 1
	out := make([]float64, last)
	for j := range last {
		var ratios []float64
		for _, rps := range perRound {
			if rps[j] > 0 {
				ratios = append(ratios, rps[last]/rps[j])
			}
		}
		out[j] = median.Of(ratios)
	}
	return out
}

// runFor runs n workers, each sending one request at a time, for d, and
// returns the completed requests per second and their number. The first
// error stops the run.
func runFor(ctx context.Context, n int, d time.Duration, client func() (*http.Client, func()), tg *target) (float64, int64, error) {
	var (
		stop     atomic.Bool
		total    atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	start := time.Now()
	for g := range n {
		wg.Go(func() {
			done := 0
			for i := 0; !stop.Load(); i++ {
				cl, release := client()
				err := tg.do(ctx, cl, g, i)
				release()
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("worker %d: %w", g, err) })
					stop.Store(true)
					break
				}
				done++
			}
			total.Add(int64(done))
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds(), total.Load(), firstErr
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad worker count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func selected(list, name string) bool {
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" && strings.HasPrefix(strings.ToLower(name), strings.ToLower(f)) {
			return true
		}
	}
	return false
}

// loadAverage returns the 1-minute load average, to show how busy the
// shared machine was; "unknown" where /proc/loadavg is missing.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
