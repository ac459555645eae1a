package main

import "math"

// staticTarget is the budget's target for etcd / static under load: a budget
// should match the static split where the workers' demand is even, and
// beat it by 1.3 where one worker wants more than its share.
func staticTarget(load string) float64 {
	if load == loadSkewed || load == loadSkewedCapped {
		return 1.3
	}
	return 1.0
}

// bouncerTarget is the target for etcd / pgbouncer, on every load.
const bouncerTarget = 1.0

// roundJudgement is one round of a load as the targets see it.
type roundJudgement struct {
	round int
	order []string           // the load's contenders as they ran in the round
	qps   map[string]float64 // per contender that ran (not skipped)
	etcd  bool               // whether the etcd contender ran
	// errors and most are the etcd cell's: its errors, and the most of
	// its connections seen at the server.
	errors uint64
	most   int
	safe   bool // no error and never above the budget
	// vsStatic and vsBouncer are etcd's q/s over the other's; NaN where
	// either did not run or the other had no throughput.
	vsStatic, vsBouncer float64
}

// judgement is a load's etcd contender against the targets over all its
// rounds: the errors and connections at the server in each round, the
// throughput ratios on their medians.
type judgement struct {
	load   string
	budget int
	rounds []roundJudgement
	// vsStatic and vsBouncer are the rounds' ratios summed up.
	vsStatic, vsBouncer spread
	unsafe              []int // the rounds that failed the errors and connections check
}

// safe says whether every round that ran etcd had no error and stayed
// within the budget: one round over fails it.
func (j judgement) safe() bool { return len(j.unsafe) == 0 }

// staticMet says whether the median etcd / static ratio met its target.
func (j judgement) staticMet() bool {
	return j.vsStatic.n > 0 && j.vsStatic.median >= staticTarget(j.load)
}

// bouncerMet says whether the median etcd / pgbouncer ratio met its target.
func (j judgement) bouncerMet() bool {
	return j.vsBouncer.n > 0 && j.vsBouncer.median >= bouncerTarget
}

// judge judges load's cells, round by round, against the targets; false
// if no round ran the etcd contender, so there is nothing to judge.
func judge(cells []cell, load string, budget int) (judgement, bool) {
	j := judgement{load: load, budget: budget}
	var vsStatic, vsBouncer []float64
	ran := false
	for _, round := range byRound(cells) {
		r := roundJudgement{qps: map[string]float64{}, vsStatic: math.NaN(), vsBouncer: math.NaN()}
		var etcd cell
		for _, c := range round {
			if c.load != load {
				continue
			}
			r.round = c.round
			r.order = append(r.order, c.contender)
			if c.skipped != "" {
				continue
			}
			if _, dup := r.qps[c.contender]; !dup {
				r.qps[c.contender] = c.qps
			}
			if c.contender == "etcd" && !r.etcd {
				r.etcd, etcd = true, c
			}
		}
		if len(r.order) == 0 {
			continue
		}
		if r.etcd {
			ran = true
			r.errors, r.most = etcd.errors, etcd.server.Max
			r.safe = etcd.errors == 0 && etcd.server.Max <= budget
			if !r.safe {
				j.unsafe = append(j.unsafe, r.round)
			}
			r.vsStatic, r.vsBouncer = ratio(r.qps, "static"), ratio(r.qps, "pgbouncer")
		}
		vsStatic, vsBouncer = append(vsStatic, r.vsStatic), append(vsBouncer, r.vsBouncer)
		j.rounds = append(j.rounds, r)
	}
	j.vsStatic, j.vsBouncer = spreadOf(vsStatic), spreadOf(vsBouncer)
	return j, ran
}

// ratio is etcd's q/s over other's in one round, NaN if either did not
// run or other had no throughput.
func ratio(qps map[string]float64, other string) float64 {
	e, ok := qps["etcd"]
	o, ook := qps[other]
	if !ok || !ook || o <= 0 {
		return math.NaN()
	}
	return e / o
}
