package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/shoalpool/shoal/shoaletcd"
	"github.com/shoalpool/shoal/shoalpgx"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdOpTimeout bounds the runner's own requests to etcd (the clean-up).
const etcdOpTimeout = 5 * time.Second

// newEtcdClient connects to etcd. The client's own logger is silenced: it
// warns of every request that Close cancels, in every worker of every cell,
// and what matters of etcd going away the budget logs itself.
func newEtcdClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: etcdOpTimeout, Logger: zap.NewNop()})
}

// budgetPool is a worker's shoalpgx pool on the etcd budget, with the
// budget at hand so the worker can sample its view of the shares.
type budgetPool struct {
	*shoalpgx.Pool
	budget *shoaletcd.Budget
}

// budgetStatus is the member's view of the budget, for the timeline.
func (p budgetPool) budgetStatus() shoaletcd.Status { return p.budget.Status() }

// openEtcdBudget opens a worker's shoalpgx pool of spec.MaxConns on the
// budget spec.Budget names: every worker of a cell joins the same budget,
// a fresh name per cell, so no cell inherits another's members.
func openEtcdBudget(ctx context.Context, spec workerSpec) (execer, func(), error) {
	client, err := newEtcdClient(spec.Budget.Endpoints)
	if err != nil {
		return nil, nil, fmt.Errorf("etcd: %w", err)
	}
	budget, err := shoaletcd.New(ctx, client, shoaletcd.Options{
		Name:     spec.Budget.Name,
		Size:     spec.Budget.Size,
		Min:      spec.Budget.Min,
		IdleTime: spec.Budget.IdleTime,
		Label:    fmt.Sprintf("bench-cluster worker %d", spec.Index),
		// Warnings only: "joined the budget" from every worker of every
		// cell would bury the runner's own lines on the shared stderr,
		// while etcd lost or a rejoin is what explains a bad cell.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
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
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		_ = budget.Close()
		_ = client.Close()
		return nil, nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		_ = budget.Close()
		_ = client.Close()
		return nil, nil, fmt.Errorf("ping: %w", err)
	}
	// The pool first, so that its connections give their permits back
	// before the budget leaves etcd; Close then revokes the lease, which
	// takes the member record and any slot key still held with it.
	return budgetPool{pool, budget}, func() {
		pool.Close()
		if err := budget.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "worker %d: %v\n", spec.Index, err)
		}
		_ = client.Close()
	}, nil
}

// etcdCleanup is the runner's side of one cell's budget in etcd: the
// budget's size key has no lease (it outlives members by design), so the
// runner deletes it once every worker has exited, and counts what else the
// workers left behind (their lease's keys, which Close should have revoked).
type etcdCleanup struct {
	client *clientv3.Client
	root   string // the budget's keys: shoaletcd.DefaultPrefix + name + "/"
}

// newEtcdCleanup connects the runner to etcd for spec's budget.
func newEtcdCleanup(spec budgetSpec) (*etcdCleanup, error) {
	client, err := newEtcdClient(spec.Endpoints)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &etcdCleanup{client: client, root: shoaletcd.DefaultPrefix + spec.Name + "/"}, nil
}

// finish deletes the budget's keys and closes the client. It returns how
// many keys other than size the workers had left (0 when every worker's
// Close revoked its lease) and an error if etcd did not let it delete them
// or keys remain after the delete. It runs on a context of its own, so an
// interrupted run still cleans up.
func (e *etcdCleanup) finish() (leftover int, err error) {
	defer e.client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), etcdOpTimeout)
	defer cancel()
	r, err := e.client.Get(ctx, e.root, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd: reading %s: %w", e.root, err)
	}
	for _, kv := range r.Kvs {
		if string(kv.Key) != e.root+"size" {
			leftover++
		}
	}
	if _, err := e.client.Delete(ctx, e.root, clientv3.WithPrefix()); err != nil {
		return leftover, fmt.Errorf("etcd: deleting %s: %w", e.root, err)
	}
	r, err = e.client.Get(ctx, e.root, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return leftover, fmt.Errorf("etcd: reading %s: %w", e.root, err)
	}
	if r.Count != 0 {
		return leftover, fmt.Errorf("etcd: %d keys still under %s after deleting them", r.Count, e.root)
	}
	return leftover, nil
}

// statsPool is a shoalpgx pool, whose shoal Stats the worker samples.
type statsPool interface{ Stat() *shoalpgx.Stat }

// budgetStatuser is a pool on a shoaletcd budget.
type budgetStatuser interface{ budgetStatus() shoaletcd.Status }
