package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/clustertest"
	"github.com/shoalpool/shoal/shoaletcd"
	"github.com/shoalpool/shoal/shoalpgx"
)

// observer counts what the pool's Observer is told that Stats does not
// keep: closes by reason, and dials the fence refused.
type observer struct {
	shoal.BaseObserver
	closed   [32]atomic.Int64 // by Reason; Reasons are small
	fenced   atomic.Int64
	connects atomic.Int64
}

func (o *observer) ObserveClose(r shoal.Reason) {
	if r >= 0 && int(r) < len(o.closed) {
		o.closed[r].Add(1)
	}
}

func (o *observer) ObserveDial(_ time.Duration, err error) {
	if errors.Is(err, shoalpgx.ErrSlotFenced) {
		o.fenced.Add(1)
	}
}

// closes returns the closes by reason name, and how many of them count as
// dropped: all but those made on a release or while idle, for the pool's
// own reasons (a smaller share, a permit the budget took back, lifetime,
// idleness, the pool's close), which never take a connection from a
// holder.
func (o *observer) closes() (map[string]int64, int64) {
	m := map[string]int64{}
	var dropped int64
	for i := range o.closed {
		n := o.closed[i].Load()
		if n == 0 {
			continue
		}
		r := shoal.Reason(i)
		m[r.String()] = n
		switch r {
		case shoal.ReasonResized, shoal.ReasonRevoked, shoal.ReasonLifetime, shoal.ReasonIdle, shoal.ReasonPoolClosed:
		default:
			dropped += n
		}
	}
	return m, dropped
}

// reporter writes Reports.
type reporter struct {
	out    io.Writer
	pool   *shoalpgx.Pool
	budget *shoaletcd.Budget
	obs    *observer
	load   *load
}

// write writes one Report line.
func (r *reporter) write() error {
	s := r.pool.Stat().Shoal()
	b := r.budget.Status()
	closed, dropped := r.obs.closes()
	first, _ := r.load.firstError.Load().(string)
	rep := clustertest.Report{
		At: time.Now().UnixMilli(), PID: os.Getpid(),
		Share: s.Share, Demand: s.Demand, Open: s.TotalConns, Dialing: s.Dialing,
		InUse: s.InUseConns, Waiting: s.Waiting, Members: s.BudgetMembers,
		Fair: b.Fair, Held: b.Held, Joined: b.Joined, Online: b.Online,
		Load: r.load.running(), Queries: r.load.queries.Load(), Errors: r.load.errors.Load(), FirstError: first,
		Dials: s.Dials, DialErrors: s.DialErrors, Fenced: r.obs.fenced.Load(), Connects: r.obs.connects.Load(),
		Closed: closed, Dropped: dropped,
	}
	line, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(r.out, "%s\n", line)
	return err
}
