package shoalpgx

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// fakePG is a PostgreSQL server on in-memory pipes, for tests under
// testing/synctest, where its clock is the bubble's. It speaks enough of
// the protocol for pgx to connect (no password) and run simple queries,
// and carries out cancel requests as PostgreSQL does: the request's
// connection signals the session, then hangs up (the acknowledgement), and
// a signal that finds the session idle is dropped when its next statement
// starts. Statements:
//
//	sleep <duration>          runs that long, or until a signal cancels it
//	swallow <duration>        the same, but ignores the first signal
//	anything else             returns at once
type fakePG struct {
	// signalDelay is how long a cancel request takes to signal its
	// session, and so to be acknowledged.
	signalDelay time.Duration
	// silent makes the server answer nothing from then on, neither
	// statements nor cancel requests, and close nothing: a crashed machine
	// or a partition, as its clients see it.
	silent atomic.Bool
	// ignoreCancels makes the server read cancel requests and never act
	// on them or hang up, while it answers statements as before.
	ignoreCancels atomic.Bool

	// exitDelay is how long a session's backend takes to exit once its
	// client said Terminate or hung up: it still counts at the server
	// (live) until then, and hangs up only then, as PostgreSQL's does.
	exitDelay time.Duration

	cancels atomic.Int64 // cancel requests received
	logins  atomic.Int64 // sessions started
	live    atomic.Int64 // sessions whose backend has not exited
	maxLive atomic.Int64 // the most sessions live at once

	mu       sync.Mutex
	sessions map[uint32]*fakeSession
	conns    []net.Conn // the server's ends, closed by close
	wg       sync.WaitGroup
}

// fakeSession is one backend: signal holds a cancel that reached it.
type fakeSession struct {
	signal chan struct{}
}

// newFakePG returns a server that closes its connections, and waits for its
// goroutines, at the test's end.
func newFakePG(t *testing.T) *fakePG {
	f := &fakePG{sessions: make(map[uint32]*fakeSession)}
	t.Cleanup(f.close)
	return f
}

// config returns a pool config whose connections are dialled to f.
func (f *fakePG) config(t *testing.T, mutate func(*Config)) *Config {
	t.Helper()
	cfg, err := ParseConfig("host=127.0.0.1 port=5432 user=fake dbname=fake sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DialFunc = f.dial
	cfg.ConnConfig.LookupFunc = func(context.Context, string) ([]string, error) { return []string{"127.0.0.1"}, nil }
	if mutate != nil {
		mutate(cfg)
	}
	return cfg
}

// dial is the pool's DialFunc: a new pipe, served by f.
func (f *fakePG) dial(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	f.mu.Lock()
	f.conns = append(f.conns, server)
	f.mu.Unlock()
	f.wg.Go(func() { f.serve(server) })
	return client, nil
}

// close hangs up every connection and waits for their goroutines.
func (f *fakePG) close() {
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	f.wg.Wait()
}

// serve serves one connection: a session, or a cancel request. What it
// sends goes through a queue, as through a socket's buffer: a pipe has
// none, and a server blocked writing while the client writes (pgx's
// Terminate after a cancel) would wait for pgx's slow-write reader.
func (f *fakePG) serve(c net.Conn) {
	out := make(chan []byte, 1024)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for b := range out {
			if _, err := c.Write(b); err != nil {
				for range out {
				}
				return
			}
		}
	}()
	defer func() {
		close(out)
		<-sent
		_ = c.Close()
	}()
	be := pgproto3.NewBackend(c, queueWriter(out))
	msg, err := be.ReceiveStartupMessage()
	if err != nil {
		return
	}
	switch m := msg.(type) {
	case *pgproto3.CancelRequest:
		f.cancel(c, m.ProcessID)
		return
	case *pgproto3.StartupMessage:
	default:
		return
	}
	pid, s := f.newSession()
	defer func() {
		time.Sleep(f.exitDelay)
		f.live.Add(-1)
	}()
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: []byte{0, 0, 0, 1}})
	// pgx runs the simple protocol only on a server that says these.
	be.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
	be.Send(&pgproto3.ParameterStatus{Name: "standard_conforming_strings", Value: "on"})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := be.Flush(); err != nil {
		return
	}
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		if f.silent.Load() {
			continue
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			f.run(be, s, m.String)
			if err := be.Flush(); err != nil {
				return
			}
		default: // Terminate, or anything this server does not know
			return
		}
	}
}

// queueWriter writes by queueing a copy of what it is given.
type queueWriter chan<- []byte

func (q queueWriter) Write(b []byte) (int, error) {
	q <- append([]byte(nil), b...)
	return len(b), nil
}

// newSession registers a backend.
func (f *fakePG) newSession() (uint32, *fakeSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pid := uint32(1000 + len(f.sessions))
	s := &fakeSession{signal: make(chan struct{}, 1)}
	f.sessions[pid] = s
	f.logins.Add(1)
	if n := f.live.Add(1); n > f.maxLive.Load() {
		f.maxLive.Store(n) // under f.mu: no other session starts meanwhile
	}
	return pid, s
}

// cancel carries out a cancel request for pid: after signalDelay it
// signals the session, and serve then hangs up. A silent server reads on
// until the connection is closed.
func (f *fakePG) cancel(c net.Conn, pid uint32) {
	f.cancels.Add(1)
	if f.silent.Load() || f.ignoreCancels.Load() {
		_, _ = io.Copy(io.Discard, c)
		return
	}
	time.Sleep(f.signalDelay)
	f.mu.Lock()
	s := f.sessions[pid]
	f.mu.Unlock()
	if s != nil {
		select {
		case s.signal <- struct{}{}:
		default:
		}
	}
}

// run runs one statement and queues its answer.
func (f *fakePG) run(be *pgproto3.Backend, s *fakeSession, sql string) {
	// A signal that reached the session while it waited for this
	// statement is dropped, as PostgreSQL drops a cancel that finds no
	// statement running.
	select {
	case <-s.signal:
	default:
	}
	verb, arg, _ := strings.Cut(sql, " ")
	if verb == "sleep" || verb == "swallow" {
		d, err := time.ParseDuration(arg)
		if err != nil {
			panic(err)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		ignore := verb == "swallow"
	wait:
		select {
		case <-t.C:
		case <-s.signal:
			if ignore {
				ignore = false
				goto wait
			}
			be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: ctxerr.QueryCanceled, Message: "canceling statement due to user request"})
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			return
		}
	}
	be.Send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
}
