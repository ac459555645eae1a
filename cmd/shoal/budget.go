package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

const budgetUsage = `usage: shoal budget NAME --etcd ADDR[,ADDR...] [--watch] [--interval D] [--prefix P] [--timeout D]

Prints the members of the connection budget NAME kept in etcd (shoaletcd):
for each, its demand (connections in use plus waited for, smoothed), its
minimum, its max-min share, and the slots it holds (one per open
connection, plus any it keeps for its next dial). It writes nothing.

flags:
  --etcd ADDR[,ADDR...]  etcd client endpoints, such as 127.0.0.1:2379 (required)
  --watch                print again every --interval until Ctrl-C
  --interval D           how often --watch prints (default 1s)
  --prefix P             the budgets' key prefix (default /shoal/budget/)
  --timeout D            how long to wait for etcd (default 5s)
`

// budgetOptions are the parsed flags of `shoal budget`.
type budgetOptions struct {
	name     string
	etcd     []string
	watch    bool
	interval time.Duration
	prefix   string
	timeout  time.Duration
}

// parseBudgetFlags parses `shoal budget`'s arguments: the budget's name,
// before, after or among the flags.
func parseBudgetFlags(args []string) (*budgetOptions, error) {
	o := &budgetOptions{}
	fs := flag.NewFlagSet("shoal budget", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	endpoints := fs.String("etcd", "", "")
	fs.BoolVar(&o.watch, "watch", false, "")
	fs.DurationVar(&o.interval, "interval", time.Second, "")
	fs.StringVar(&o.prefix, "prefix", shoaletcd.DefaultPrefix, "")
	fs.DurationVar(&o.timeout, "timeout", defaultDialTimeout, "")
	// The flag package stops at the first argument that is not a flag:
	// that is the name, and the flags after it are parsed in turn.
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagError(fs, err) // said as bench and sweep say it
		}
		if fs.NArg() == 0 {
			break
		}
		if o.name != "" {
			return nil, usagef("unexpected argument %q after the budget's name %q; give one name", fs.Arg(0), o.name)
		}
		o.name, args = fs.Arg(0), fs.Args()[1:]
	}
	switch {
	case o.name == "":
		return nil, usagef("the budget's NAME is required")
	case *endpoints == "":
		return nil, usagef("--etcd is required: the etcd client endpoints, such as 127.0.0.1:2379")
	case o.interval <= 0:
		return nil, usagef("--interval must be > 0, got %s", o.interval)
	case o.timeout <= 0:
		return nil, usagef("--timeout must be > 0, got %s", o.timeout)
	}
	for _, e := range strings.Split(*endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			o.etcd = append(o.etcd, e)
		}
	}
	if len(o.etcd) == 0 {
		// --etcd " , " would otherwise reach the client, which fails
		// as if etcd were down.
		return nil, usagef("--etcd names no endpoint; want one or more, such as 127.0.0.1:2379")
	}
	return o, nil
}

// runBudget is `shoal budget`.
func runBudget(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseBudgetFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return printed(stdout, stderr, "budget", "help", budgetUsage)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shoal budget: %s\n\n%s", redactRaw(err.Error()), budgetUsage)
		return exitUsage
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: o.etcd, DialTimeout: o.timeout, Logger: quietEtcdLogger()})
	if err != nil {
		fmt.Fprintf(stderr, "shoal budget: etcd at %s: %s\n", redactRaw(strings.Join(o.etcd, ",")), redactRaw(err.Error()))
		return exitFailed
	}
	defer client.Close()
	for {
		readCtx, cancel := context.WithTimeout(ctx, o.timeout)
		v, err := shoaletcd.Read(readCtx, client, o.name, o.prefix)
		cancel()
		switch {
		case ctx.Err() != nil:
			return exitInterrupted
		case errors.Is(err, context.DeadlineExceeded):
			fmt.Fprintf(stderr, "shoal budget: etcd at %s did not answer within %s\n", redactRaw(strings.Join(o.etcd, ",")), o.timeout)
			if !o.watch {
				return exitFailed
			}
		case err != nil:
			fmt.Fprintf(stderr, "shoal budget: %s (etcd at %s)\n", redactRaw(err.Error()), redactRaw(strings.Join(o.etcd, ",")))
			if !o.watch {
				return exitFailed
			}
		case v.Size == 0 && len(v.Members) == 0:
			// v.Prefix, not o.prefix: shoaletcd reads "" as its default.
			fmt.Fprintf(stderr, "shoal budget: no budget %q under %q in etcd (no member has joined it)\n", o.name, v.Prefix)
			if !o.watch {
				return exitFailed
			}
		default:
			out := &outputWriter{w: stdout}
			printBudget(out, v, o.watch)
			if out.err != nil {
				// Stopped, with --watch too: it would read etcd every
				// --interval for output that goes nowhere.
				fmt.Fprintf(stderr, "shoal budget: writing the budget: %v\n", out.err)
				return exitFailed
			}
		}
		if !o.watch {
			return exitOK
		}
		select {
		case <-ctx.Done():
			return exitInterrupted
		case <-time.After(o.interval):
		}
	}
}

// printBudget writes one view of a budget: a line for the budget, then a
// table of its members.
func printBudget(w io.Writer, v shoaletcd.View, stamp bool) {
	held := 0
	for _, m := range v.Members {
		held += len(m.Slots)
	}
	if stamp {
		fmt.Fprintf(w, "%s\n", time.Now().Format("15:04:05"))
	}
	fmt.Fprintf(w, "budget %s: %d connections, %d held, %d free, %s",
		v.Name, v.Size, held, v.Free, benchrun.Plural(len(v.Members), "member"))
	if len(v.Orphans) > 0 {
		fmt.Fprintf(w, ", %d slots held by members leaving (%v)", len(v.Orphans), v.Orphans)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "member\thost\tpid\tdemand\tmin\tshare\theld\t")
	for _, m := range v.Members {
		name := m.ID
		if m.Label != "" {
			name = m.Label
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", name, m.Host, m.PID, m.Demand, m.Min, m.Share, len(m.Slots))
	}
	tw.Flush()
}

// quietEtcdLogger keeps etcd's client from logging its retries on stderr:
// the command reports what failed itself, in one line.
func quietEtcdLogger() *zap.Logger { return zap.NewNop() }
