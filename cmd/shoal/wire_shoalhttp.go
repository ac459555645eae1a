package main

import (
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
)

// This file wires shoalhttp into the bench (see adapters.go).

func init() { newShoalHTTP = openShoalHTTP }

// shoalHTTPPool adapts a shoalhttp.Transport to httpPool.
type shoalHTTPPool struct{ *shoalhttp.Transport }

// ConnsOpened sums the dials of every origin's pool.
func (p shoalHTTPPool) ConnsOpened() int64 {
	var n int64
	for _, s := range p.Stats() {
		n += s.Dials
	}
	return n
}

func openShoalHTTP(o httpPoolOptions) (httpPool, error) {
	opts := shoalhttp.Options{
		MaxConns:            o.MaxConnsPerHost,
		TLSClientConfig:     o.TLS,
		DialTimeout:         o.DialTimeout,
		TLSHandshakeTimeout: o.DialTimeout,
	}
	if o.Observer != nil {
		opts.Observer = func(string) shoal.Observer { return o.Observer }
	}
	t, err := shoalhttp.NewTransport(opts)
	if err != nil {
		return nil, err
	}
	return shoalHTTPPool{t}, nil
}
