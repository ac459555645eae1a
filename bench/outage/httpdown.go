package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/shoalpool/shoal/shoalhttp"
)

// flakyServer is a net/http server on a loopback port that can go away
// (its listener and every connection closed) and come back on the same
// port. It counts the connections each incarnation holds, from the
// server's side.
type flakyServer struct {
	addr string
	zero time.Time

	mu      sync.Mutex
	srv     *http.Server
	gen     int           // the incarnation; a connection counts in its own
	open    int           // connections of the current incarnation
	samples []countSample // the current incarnation's count after each change
}

// okHandler answers every request with a two-byte body.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = io.WriteString(w, "ok")
})

// newFlakyServer starts a server on a free loopback port.
func newFlakyServer(zero time.Time) (*flakyServer, error) {
	f := &flakyServer{addr: "127.0.0.1:0", zero: zero}
	if err := f.up(); err != nil {
		return nil, err
	}
	return f, nil
}

// rebindWait bounds how long up retries a port another socket still holds.
const rebindWait = 2 * time.Second

// up starts an incarnation on f.addr (the first picks the port).
func (f *flakyServer) up() error {
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(rebindWait); ; {
		ln, err = net.Listen("tcp", f.addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("listening on %s again: %w", f.addr, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addr = ln.Addr().String()
	f.gen++
	gen := f.gen
	f.open = 0
	f.samples = nil
	f.srv = &http.Server{Handler: okHandler, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) { f.track(gen, st) }}
	go func(srv *http.Server) { _ = srv.Serve(ln) }(f.srv)
	return nil
}

// track counts a connection of incarnation gen in or out.
func (f *flakyServer) track(gen int, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gen != f.gen {
		return
	}
	switch st {
	case http.StateNew:
		f.open++
	case http.StateClosed, http.StateHijacked:
		f.open--
	default:
		return
	}
	f.samples = append(f.samples, countSample{at: time.Since(f.zero), count: f.open})
}

// down closes the listener and every connection of the incarnation.
func (f *flakyServer) down() error {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// counts returns the current incarnation's connection counts.
func (f *flakyServer) counts() []countSample {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]countSample(nil), f.samples...)
}

// An httpContender is an HTTP client with at most maxConns connections
// to an origin, dialling through dial.
type httpContender struct {
	name string
	open func(maxConns int, dial dialFunc) (*http.Client, func(), error)
}

var httpContenders = []httpContender{
	{name: "shoalhttp", open: func(maxConns int, dial dialFunc) (*http.Client, func(), error) {
		t, err := shoalhttp.NewTransport(shoalhttp.Options{MaxConns: maxConns, DialContext: dial})
		if err != nil {
			return nil, nil, err
		}
		return &http.Client{Transport: t}, func() {
			ctx, cancel := context.WithTimeout(context.Background(), closeWait)
			defer cancel()
			_ = t.Close(ctx)
		}, nil
	}},
	{name: "net/http", open: func(maxConns int, dial dialFunc) (*http.Client, func(), error) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxConnsPerHost = maxConns
		// As many kept idle, or net/http closes all but 2 (its default)
		// of every burst's connections and dials them again.
		t.MaxIdleConnsPerHost = maxConns
		t.DialContext = dial
		return &http.Client{Transport: t}, t.CloseIdleConnections, nil
	}},
}

// drain reads a response's body to its end.
func drain(resp *http.Response) (int64, error) { return io.Copy(io.Discard, resp.Body) }

// runHTTPDown runs each client through s.rounds outages, each of a server
// of its own.
func runHTTPDown(s downSpec) ([]downRun, error) {
	return inRounds(len(httpContenders), s, func(i, _ int) (downRun, error) {
		return httpDownOnce(httpContenders[i], s)
	})
}

func httpDownOnce(c httpContender, s downSpec) (downRun, error) {
	r := downRun{pool: c.name}
	zero := time.Now()
	srv, err := newFlakyServer(zero)
	if err != nil {
		return r, err
	}
	defer srv.down()
	dials := newDialLog(zero)
	client, closeFn, err := c.open(s.maxConns, dials.wrap(tcpDial))
	if err != nil {
		return r, err
	}
	w := startWorkers(zero, s.workerSpec, httpGet(client, "http://"+srv.addr+"/"))
	at := func() time.Duration { return time.Since(zero) }
	r.t.warm = s.warm
	time.Sleep(time.Until(zero.Add(s.before)))
	r.t.stop = at()
	downErr := srv.down()
	r.t.down = at()
	time.Sleep(time.Until(zero.Add(r.t.down + s.down)))
	r.t.back = at()
	upErr := srv.up()
	r.t.returned = at()
	if upErr == nil {
		time.Sleep(time.Until(zero.Add(r.t.returned + s.after)))
	}
	r.t.end = at()
	r.workersStuck = !w.end(s.deadline + closeWait)
	counts := srv.counts()
	r.closeStuck = !closeBounded(closeFn)
	if upErr != nil {
		return r, upErr
	}
	if downErr != nil && !errors.Is(downErr, net.ErrClosed) {
		return r, fmt.Errorf("closing the server: %w", downErr)
	}
	r.f = measureOutage(w.all(), r.t, dials.snapshot())
	r.conns = reachedAfter(counts, r.t.returned, s.maxConns)
	return r, nil
}
