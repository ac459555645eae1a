package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// maxBody bounds how much of a response body an operation reads.
const maxBody = 1 << 20

// httpRequest describes the request every operation of an HTTP case sends.
type httpRequest struct {
	url      string // without userinfo
	user     string
	password string // sent as basic auth, never printed
	hasAuth  bool
}

// newRequest builds the request under ctx.
func (r *httpRequest) newRequest(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	if r.hasAuth {
		req.SetBasicAuth(r.user, r.password)
	}
	return req, nil
}

// roundTrip sends one request on rt and reads the whole response.
func (r *httpRequest) roundTrip(ctx context.Context, rt http.RoundTripper) error {
	req, err := r.newRequest(ctx)
	if err != nil {
		return err
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// countingTransport returns a clone of base that trusts tlsCfg, bounds dials
// by dialTimeout, and counts the connections it opens.
func countingTransport(base *http.Transport, tlsCfg *tls.Config, dialTimeout time.Duration) (*http.Transport, *atomic.Int64) {
	t := base.Clone()
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg.Clone()
	}
	var opened atomic.Int64
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			opened.Add(1)
		}
		return c, err
	}
	t.TLSHandshakeTimeout = dialTimeout
	t.Proxy = nil // benchmark traffic goes to loopback or the user's target only
	return t, &opened
}

// defaultTransport is a clone of http.DefaultTransport, as most programs
// use it: at most 2 idle connections kept per host.
func defaultTransport(tlsCfg *tls.Config, dialTimeout time.Duration) (*http.Transport, *atomic.Int64) {
	return countingTransport(http.DefaultTransport.(*http.Transport), tlsCfg, dialTimeout)
}

// tunedTransport is an http.Transport set up for workers concurrent
// requests to one host: as many idle connections kept as there are workers.
func tunedTransport(tlsCfg *tls.Config, dialTimeout time.Duration, workers int) (*http.Transport, *atomic.Int64) {
	t, n := countingTransport(http.DefaultTransport.(*http.Transport), tlsCfg, dialTimeout)
	t.MaxIdleConns = max(100, workers)
	t.MaxIdleConnsPerHost = workers
	t.MaxConnsPerHost = workers
	return t, n
}

// transportInstance runs one request per operation through t.
func transportInstance(req *httpRequest, t *http.Transport, opened *atomic.Int64) *benchrun.Instance {
	return &benchrun.Instance{
		Op: func(ctx context.Context) (time.Duration, error) {
			return 0, req.roundTrip(ctx, t)
		},
		ConnsOpened: opened.Load,
		Close: func() error {
			t.CloseIdleConnections()
			return nil
		},
	}
}

// newTransportPerRequestInstance builds a new transport for every request
// and drops it after, as the InfluxDB client did before its fix.
func newTransportPerRequestInstance(req *httpRequest, tlsCfg *tls.Config, dialTimeout time.Duration) *benchrun.Instance {
	var opened atomic.Int64
	return &benchrun.Instance{
		Op: func(ctx context.Context) (time.Duration, error) {
			t, n := defaultTransport(tlsCfg, dialTimeout)
			err := req.roundTrip(ctx, t)
			t.CloseIdleConnections()
			opened.Add(n.Load())
			return 0, err
		},
		ConnsOpened: opened.Load,
	}
}

// shoalHTTPCase is the shoalhttp case of an HTTP scenario, or a skipped
// one while shoalhttp has not landed.
func shoalHTTPCase(req *httpRequest, tlsCfg *tls.Config, dialTimeout time.Duration, workers int) benchrun.Case {
	c := benchrun.Case{Name: "shoalhttp", Pool: &benchrun.PoolConfig{MaxConns: workers}}
	if newShoalHTTP == nil {
		c.Skip = notLanded("shoalhttp")
		return c
	}
	c.Setup = func(ctx context.Context) (*benchrun.Instance, error) {
		waits := &benchrun.WaitObserver{}
		rt, err := newShoalHTTP(httpPoolOptions{MaxConnsPerHost: workers, TLS: tlsCfg, DialTimeout: dialTimeout, Observer: waits})
		if err != nil {
			return nil, err
		}
		return &benchrun.Instance{
			Waits: waits,
			Op: func(ctx context.Context) (time.Duration, error) {
				return 0, req.roundTrip(ctx, rt)
			},
			ConnsOpened: rt.ConnsOpened,
			Close: func() error {
				ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
				defer cancel()
				return rt.Close(ctx)
			},
		}, nil
	}
	return c
}
