package main

import (
	"strings"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// skipReasons lists why each skipped scenario or case of r did not run,
// "multiplex: does not fit ...", for the error of a run that measured
// nothing: with --json or --csv no table line above it says why.
func skipReasons(r *benchrun.Report) string {
	var reasons []string
	for _, s := range r.Scenarios {
		if s.Skipped != "" {
			reasons = append(reasons, s.Name+": "+s.Skipped)
		}
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == benchrun.StatusSkipped {
					reasons = append(reasons, s.Name+"/"+res.Name+": "+res.Reason)
				}
			}
		}
	}
	return strings.Join(reasons, "; ")
}

// failReasons lists each failed case of r with its failure,
// "churn/shoalhttp: setup: ...", for the error of a run with --json or
// --csv, where no FAILED line above it says which case failed and why.
func failReasons(r *benchrun.Report) string {
	var reasons []string
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == benchrun.StatusFailed {
					reasons = append(reasons, s.Name+"/"+res.Name+": "+res.Reason)
				}
			}
		}
	}
	return strings.Join(reasons, "; ")
}
