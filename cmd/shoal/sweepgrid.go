package main

import (
	"fmt"
	"slices"
)

// maxSweepPartitions bounds the partitions the sweep tries: past 8, on
// the machines the sweep runs on, the idle stacks hold a connection or
// two each and a configuration measures stealing more than partitioning.
const maxSweepPartitions = 8

// sweepConfig is one configuration the sweep measures.
type sweepConfig struct {
	maxConns, partitions int
	// isDefault marks the configuration a pool gets without settings,
	// which every other is compared with.
	isDefault bool
}

// defaultSuffix marks the default configuration's name.
const defaultSuffix = " (default)"

// name is the configuration's name in the tables: "4x8" for 4 partitions
// of 8, and for a default whose partitions do not divide its connections
// evenly, "3p/4" (3 partitions, 4 connections in all).
func (c sweepConfig) name() string {
	n := fmt.Sprintf("%dp/%d", c.partitions, c.maxConns)
	if c.maxConns%c.partitions == 0 {
		n = partitionCaseName(partitionConfig{c.partitions, c.maxConns / c.partitions})
	}
	if c.isDefault {
		n += defaultSuffix
	}
	return n
}

// less orders configurations by size: fewer connections, then fewer
// partitions.
func (c sweepConfig) less(d sweepConfig) bool {
	if c.maxConns != d.maxConns {
		return c.maxConns < d.maxConns
	}
	return c.partitions < d.partitions
}

// sweepTotals are the totals of connections a sweep tries: a quarter, half
// and all of maxConns; --quick leaves out the quarter, to run in about
// two thirds of the time and still vary the total.
func sweepTotals(maxConns int, quick bool) []int {
	if quick {
		return []int{maxConns / 2, maxConns}
	}
	return []int{maxConns / 4, maxConns / 2, maxConns}
}

// sweepTable lists the configurations of a sweep of totals (see
// sweepTotals) connections in all, each split
// into 1, 2, 4 and 8 partitions where they divide it evenly (so that every
// configuration opens exactly its total: 10 in 4 partitions would open 8),
// and the default configuration (defConns, defParts), marked, added when
// the grid lacks it. Varying the total is how the sweep finds a smaller
// configuration that does as well; the default is what "significantly
// better" is measured against. Smallest first.
func sweepTable(totals []int, defConns, defParts int) []sweepConfig {
	maxConns := slices.Max(totals)
	var out []sweepConfig
	add := func(c sweepConfig) {
		for _, o := range out {
			if o.maxConns == c.maxConns && o.partitions == c.partitions {
				return
			}
		}
		out = append(out, c)
	}
	for _, total := range totals {
		if total < 1 {
			continue
		}
		for p := 1; p <= min(total, maxSweepPartitions); p *= 2 {
			if total%p == 0 {
				add(sweepConfig{maxConns: total, partitions: p})
			}
		}
	}
	def := sweepConfig{maxConns: min(defConns, maxConns), partitions: max(1, min(defParts, defConns, maxConns))}
	add(def)
	for i := range out {
		out[i].isDefault = out[i].maxConns == def.maxConns && out[i].partitions == def.partitions
	}
	slices.SortStableFunc(out, func(a, b sweepConfig) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	return out
}
