package main

import (
	"context"
	"errors"
)

// openBudget opens a worker's shoalpgx pool on the cluster-wide budget in
// etcd: the contender this benchmark exists for.
//
// THE SEAM: it is nil in a default build, and the etcd contender then
// reports itself as not built, because shoaletcd and shoalpgx's Budget
// support are not in this tree yet. budget_shoaletcd.go (build tag
// shoaletcd) sets it; once both are merged, delete the tag there, add
// go.etcd.io/etcd/client/v3 to bench/go.mod and delete this comment's
// second sentence.
var openBudget func(ctx context.Context, spec workerSpec) (execer, func(), error)

// openOnBudget calls openBudget, which an init function may set after the
// contenders are declared.
func openOnBudget(ctx context.Context, spec workerSpec) (execer, func(), error) {
	if openBudget == nil {
		return nil, nil, errors.New("the etcd contender is not in this binary (build tag shoaletcd)")
	}
	return openBudget(ctx, spec)
}
