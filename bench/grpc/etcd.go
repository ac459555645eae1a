package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// etcdJob is the seed's experiment: writers put batches to their own
// prefixes, then as many readers range over those prefixes.
type etcdJob struct {
	writers, batches, batchSize, reads int
}

// etcdTimes are the whole-job times of one run.
type etcdTimes struct {
	write, read time.Duration
}

// run does the job through c under a prefix of its own, then deletes the
// keys and compacts etcd's history (not timed), so that the next run does
// not range over this one's deleted revisions: the project's tests leave
// many of them, and ranging over them would slow the job many times over.
func (j etcdJob) run(c conn, prefix string) (etcdTimes, error) {
	kv := pb.NewKVClient(c)
	ctx := context.Background()
	defer func() {
		r, err := kv.DeleteRange(ctx, &pb.DeleteRangeRequest{Key: []byte(prefix), RangeEnd: prefixEnd(prefix)})
		if err == nil {
			_, _ = kv.Compact(ctx, &pb.CompactionRequest{Revision: r.Header.Revision})
		}
	}()
	if _, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(prefix), CountOnly: true}); err != nil {
		return etcdTimes{}, fmt.Errorf("warm-up: %w", err)
	}
	value := bytes.Repeat([]byte("v"), 100)
	var t etcdTimes

	start := time.Now()
	err := parallel(j.writers, func(w int) error {
		for b := range j.batches {
			ops := make([]*pb.RequestOp, j.batchSize)
			for k := range ops {
				key := fmt.Appendf(nil, "%s%03d/%04d-%03d", prefix, w, b, k)
				ops[k] = &pb.RequestOp{Request: &pb.RequestOp_RequestPut{
					RequestPut: &pb.PutRequest{Key: key, Value: value}}}
			}
			var err error
			for try := 0; try < 5; try++ {
				// An overloaded etcd answers "request timed out" for a
				// batch it may still apply; putting the same values again
				// is harmless.
				if _, err = kv.Txn(ctx, &pb.TxnRequest{Success: ops}); !isEtcdTimeout(err) {
					break
				}
			}
			if err != nil {
				return fmt.Errorf("writer %d batch %d: %w", w, b, err)
			}
		}
		return nil
	})
	t.write = time.Since(start)
	if err != nil {
		return t, err
	}

	want := int64(j.batches * j.batchSize)
	start = time.Now()
	err = parallel(j.writers, func(w int) error {
		p := fmt.Sprintf("%s%03d/", prefix, w)
		for range j.reads {
			r, err := kv.Range(ctx, &pb.RangeRequest{Key: []byte(p), RangeEnd: prefixEnd(p)})
			if err != nil {
				return fmt.Errorf("reader %d: %w", w, err)
			}
			if r.Count != want || int64(len(r.Kvs)) != want {
				return fmt.Errorf("reader %d: %d keys, want %d", w, r.Count, want)
			}
		}
		return nil
	})
	t.read = time.Since(start)
	return t, err
}

// watchResult is how many watches were live one window after the start,
// and how long it took until all were (0: not within the wait).
type watchResult struct {
	live  int
	allIn time.Duration
}

// watchLive opens n Watch streams at once through c and counts those whose
// creation etcd acknowledged within window of the start; it then waits up
// to wait for the rest, to say when all n were live.
func watchLive(c conn, prefix string, n int, window, wait time.Duration) (watchResult, error) {
	watch := pb.NewWatchClient(c)
	kv := pb.NewKVClient(c)
	if _, err := kv.Range(context.Background(), &pb.RangeRequest{Key: []byte(prefix), CountOnly: true}); err != nil {
		return watchResult{}, fmt.Errorf("warm-up: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	created := make([]time.Time, n) // when etcd acknowledged each watch
	var wg sync.WaitGroup
	var nLive atomic.Int64
	allLive := make(chan struct{}) // closed by the n-th watch to go live
	start := time.Now()
	deadline := start.Add(window)
	for i := range n {
		wg.Go(func() {
			stream, err := watch.Watch(ctx)
			if err != nil {
				return
			}
			key := fmt.Appendf(nil, "%s%04d", prefix, i)
			if err := stream.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{
				CreateRequest: &pb.WatchCreateRequest{Key: key}}}); err != nil {
				return
			}
			resp, err := stream.Recv()
			if err == nil && resp.Created {
				created[i] = time.Now()
				if nLive.Add(1) == int64(n) {
					close(allLive)
				}
			}
			<-ctx.Done() // keep the stream open until the count is taken
		})
	}
	var r watchResult
	select {
	case <-allLive:
		r.allIn = time.Since(start)
	case <-time.After(wait):
	}
	cancel()
	wg.Wait()
	for _, at := range created {
		if !at.IsZero() && !at.After(deadline) {
			r.live++
		}
	}
	return r, nil
}

// isEtcdTimeout reports etcd's "request timed out": the server gave up
// waiting for the proposal, which may still commit.
func isEtcdTimeout(err error) bool {
	return status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "request timed out")
}

// parallel runs fn(0..n-1) in n goroutines and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// prefixEnd is the range end covering every key that starts with prefix
// (prefixes here end in '/').
func prefixEnd(prefix string) []byte {
	end := []byte(prefix)
	end[len(end)-1]++
	return end
}
