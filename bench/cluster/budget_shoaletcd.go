//go:build shoaletcd

// The etcd contender, compiled only with -tags shoaletcd until shoaletcd
// and shoalpgx's Config.Budget are in this tree. Written against shoaletcd
// as of budget-etcd 9f94bc2 (New(ctx, *clientv3.Client, Options), Close);
// building it also needs go.etcd.io/etcd/client/v3 in bench/go.mod.

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func init() { openBudget = openEtcdBudget }

// openEtcdBudget opens a worker's shoalpgx pool of spec.MaxConns on the
// budget spec.Budget names: every worker of a cell joins the same budget,
// a fresh name per cell, so no cell inherits another's members.
func openEtcdBudget(ctx context.Context, spec workerSpec) (execer, func(), error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: spec.Budget.Endpoints, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	budget, err := shoaletcd.New(ctx, client, shoaletcd.Options{
		Name:  spec.Budget.Name,
		Size:  spec.Budget.Size,
		Label: fmt.Sprintf("bench-cluster worker %d", spec.Index),
	})
	if err != nil {
		_ = client.Close()
		return nil, nil, err
	}
	cfg, err := shoalpgxConfig(spec)
	if err != nil {
		_ = budget.Close()
		_ = client.Close()
		return nil, nil, err
	}
	cfg.Budget = budget
	pool, closePool, err := startShoalpgx(ctx, cfg)
	if err != nil {
		_ = budget.Close()
		_ = client.Close()
		return nil, nil, err
	}
	// The pool first, so that its connections give their permits back
	// before the budget leaves etcd.
	return pool, func() { closePool(); _ = budget.Close(); _ = client.Close() }, nil
}
