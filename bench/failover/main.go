package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/outfile"
	"github.com/shoalpool/shoal/internal/pgpair"
)

func main() {
	var (
		workers  = flag.Int("workers", 32, "writing goroutines")
		duration = flag.Duration("duration", 10*time.Second, "length of a run")
		faultAt  = flag.Duration("fault-at", 3*time.Second, "when the primary fails, from the start of the run")
		deadline = flag.Duration("deadline", 2*time.Second, "deadline of each write and each read")
		readers  = flag.Int("readers", 8, "reading goroutines, through each pool's reads (0: none)")
		pause    = flag.Duration("read-pause", 10*time.Millisecond, "pause after each read")
		cases    = flag.String("cases", "silent,stopped", "faults to run, comma-separated: silent, stopped, rejoin")
		after    = flag.Duration("after-rejoin", 5*time.Second, "how long a rejoin run goes on at least after the rejoin returned")
		only     = flag.String("pools", "shoalpgx,pgxpool", "pools to run, comma-separated")
		out      = flag.String("out", "", "write the markdown fragment here")
	)
	flag.Parse()
	s := spec{workers: *workers, duration: *duration, faultAt: *faultAt, deadline: *deadline, readers: *readers, readPause: *pause,
		afterRejoin: *after}
	if s.workers < 1 || s.faultAt <= warmup || s.faultAt >= s.duration {
		log.Fatalf("need -workers >= 1 and %v < -fault-at < -duration", warmup)
	}
	if s.readers < 0 || s.readPause < 0 || s.afterRejoin <= 0 {
		log.Fatal("need -readers >= 0, -read-pause >= 0 and -after-rejoin > 0")
	}
	var faults []fault
	for _, c := range strings.Split(*cases, ",") {
		switch f := fault(strings.TrimSpace(c)); f {
		case silent, stopped, rejoin:
			faults = append(faults, f)
		default:
			log.Fatalf("unknown case %q: want silent, stopped or rejoin", c)
		}
	}
	var pools []contender
	for _, name := range strings.Split(*only, ",") {
		found := false
		for _, c := range contenders {
			if c.name == strings.TrimSpace(name) {
				pools = append(pools, c)
				found = true
			}
		}
		if !found {
			log.Fatalf("unknown pool %q", name)
		}
	}

	pair, err := pgpair.Load()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	unlock, err := pgpair.Lock(lctx)
	cancel()
	if err != nil {
		log.Fatal(err)
	}
	defer unlock()
	// Whatever happens, leave the pair healthy.
	defer func() {
		if err := pair.Restore(ctx); err != nil {
			log.Printf("putting the pair back: %v", err)
		}
	}()

	if err := pair.Restore(ctx); err != nil {
		log.Panic(err)
	}
	version, err := prepare(ctx, pair.Primary)
	if err != nil {
		log.Panic(err)
	}
	var rs []result
	for _, f := range faults {
		for _, c := range pools {
			if err := pair.Restore(ctx); err != nil {
				log.Panic(err)
			}
			run := fmt.Sprintf("%s-%s-%d", f, c.name, time.Now().UnixNano())
			o, err := runOnce(ctx, pair, c, f, s, run)
			if err != nil {
				log.Panic(err)
			}
			ch, err := checkTable(ctx, pair.Standby, o)
			if err != nil {
				log.Panic(err)
			}
			r := result{o: o, f: measure(o, s), ch: ch, rf: measureReads(o)}
			fmt.Fprintf(os.Stderr, "%-7s %-8s acked %6d  failed %5d  lost %d  duplicated %d  first ack %s  full %s\n",
				f, c.name, r.f.acked, r.f.failed, ch.lost, ch.duplicated, ms(r.f.firstAck), ms(r.f.full))
			if s.readers > 0 {
				fmt.Fprintf(os.Stderr, "%-7s %-8s reads before %d (standby %s)  during %d  after %d (standby %s)  failed %d/%d/%d\n",
					f, c.name, r.rf.before.answered, share(r.rf.before.byStandby, r.rf.before.answered), r.rf.during.answered,
					r.rf.after.answered, share(r.rf.after.byStandby, r.rf.after.answered),
					r.rf.before.failed, r.rf.during.failed, r.rf.after.failed)
			}
			if f == rejoin {
				fmt.Fprintf(os.Stderr, "%-7s %-8s Rejoin took %s, run length %s; reads after it %d (standby %s), first by a standby %s after Rejoin began, failed %d\n",
					f, c.name, ms(o.rejoinedAt-o.promotedAt), ms(o.length), r.rf.rejoined.answered,
					share(r.rf.rejoined.byStandby, r.rf.rejoined.answered), ms(r.rf.firstStandby), r.rf.rejoined.failed)
			}
			rs = append(rs, r)
		}
	}

	cmd := "go run ./failover " + strings.Join(os.Args[1:], " ")
	machine := fmt.Sprintf("%s/%s, %d CPUs (GOMAXPROCS %d), %s, %s on loopback, %s, shoal at %s",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), version,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), tree())
	md := markdown(cmd, machine, s, rs)
	fmt.Print(md)
	if *out != "" {
		if err := outfile.Write(*out, []byte(md)); err != nil {
			log.Panic(err)
		}
	}
}

// tree names the commit being measured, and says when shoal's files (those
// outside bench/) differ from it.
func tree() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "an unknown commit"
	}
	s := "commit " + strings.TrimSpace(string(out))
	dirty, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", "..", ":(exclude)../bench").Output()
	if err == nil && len(strings.TrimSpace(string(dirty))) > 0 {
		s += " with uncommitted changes"
	}
	return s
}
