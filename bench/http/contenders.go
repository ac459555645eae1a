package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	"github.com/shoalpool/shoal/shoalhttp"
)

// contender is one way of sending HTTP requests.
type contender struct {
	name string
	// open returns the client the workers share (nil: one per request)
	// and a function that releases it.
	open func(workers int, tlsCfg *tls.Config) (client func() (*http.Client, func()), closeAll func(), err error)
}

// defaultClone is http.DefaultTransport as a program gets it, trusting
// the target's certificate when there is one.
func defaultClone(tlsCfg *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg.Clone()
	}
	return t
}

// shared makes a contender whose workers share one client.
func shared(c *http.Client, closeAll func()) (func() (*http.Client, func()), func(), error) {
	return func() (*http.Client, func()) { return c, func() {} }, closeAll, nil
}

// contenders, shoalhttp last: the report gives its ratio to each of the
// others (report.go).
var contenders = []contender{
	{
		name: "new-client",
		open: func(_ int, tlsCfg *tls.Config) (func() (*http.Client, func()), func(), error) {
			return func() (*http.Client, func()) {
				t := defaultClone(tlsCfg)
				return &http.Client{Transport: t}, t.CloseIdleConnections
			}, func() {}, nil
		},
	},
	{
		name: "default",
		open: func(_ int, tlsCfg *tls.Config) (func() (*http.Client, func()), func(), error) {
			t := defaultClone(tlsCfg)
			return shared(&http.Client{Transport: t}, t.CloseIdleConnections)
		},
	},
	{
		name: "tuned",
		open: func(workers int, tlsCfg *tls.Config) (func() (*http.Client, func()), func(), error) {
			t := defaultClone(tlsCfg)
			t.MaxIdleConns = max(workers, t.MaxIdleConns)
			t.MaxIdleConnsPerHost = workers
			return shared(&http.Client{Transport: t}, t.CloseIdleConnections)
		},
	},
	{
		// shoal pooling net/http's own connections (Transport.NewClientConn,
		// Go 1.26): the alternative to shoalhttp's hand-written HTTP/1.1
		// client and x/net HTTP/2 (clientconn.go). shoalhttp's defaults: 64
		// connections per origin, 100 streams on an HTTP/2 one.
		name: "shoal+clientconn",
		open: func(_ int, tlsCfg *tls.Config) (func() (*http.Client, func()), func(), error) {
			t := newCCTransport(tlsCfg, 64, 100)
			return shared(&http.Client{Transport: t}, func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				t.close(ctx)
			})
		},
	},
	{
		name: "shoalhttp",
		open: func(_ int, tlsCfg *tls.Config) (func() (*http.Client, func()), func(), error) {
			t, err := shoalhttp.NewTransport(shoalhttp.Options{TLSClientConfig: tlsCfg})
			if err != nil {
				return nil, nil, err
			}
			return shared(&http.Client{Transport: t}, func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				t.Close(ctx)
			})
		},
	},
}
