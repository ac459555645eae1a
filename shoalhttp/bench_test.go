package shoalhttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRoundTripHTTP1 compares the per-request cost of shoalhttp and a
// tuned http.Transport against an in-process HTTP/1.1 server, in parallel.
// The peer benchmarks against real servers are in bench/http.
func BenchmarkRoundTripHTTP1(b *testing.B) {
	srv, _ := newH1Server(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "0\n1\n2\n3\n4\n")
	}))
	tuned := http.DefaultTransport.(*http.Transport).Clone()
	tuned.MaxIdleConnsPerHost = 64
	defer tuned.CloseIdleConnections()
	sh, err := NewTransport(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close(b.Context())
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http-tuned", tuned}, {"shoalhttp", sh}} {
		b.Run(c.name, func(b *testing.B) {
			client := &http.Client{Transport: c.rt}
			b.ReportAllocs()
			getParallel(b, client, srv.URL)
		})
	}
}

// BenchmarkRoundTripHTTP2 compares shoalhttp and net/http's own HTTP/2
// client against an in-process TLS server, one request at a time (serial)
// and from GOMAXPROCS*8 goroutines (parallel).
func BenchmarkRoundTripHTTP2(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"ok"}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	tlsCfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
	std := http.DefaultTransport.(*http.Transport).Clone()
	std.TLSClientConfig = tlsCfg.Clone()
	defer std.CloseIdleConnections()
	sh, err := NewTransport(Options{TLSClientConfig: tlsCfg})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close(b.Context())
	get := func(b *testing.B, client *http.Client) {
		resp, err := client.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			b.Fatalf("served over %s", resp.Proto)
		}
	}
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http", std}, {"shoalhttp", sh}} {
		client := &http.Client{Transport: c.rt}
		b.Run(c.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				get(b, client)
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8)
			getParallel(b, client, srv.URL)
		})
	}
}

// getParallel sends GETs to url from b's parallel goroutines, reading each
// body to the end so that connections are reused.
func getParallel(b *testing.B, client *http.Client, url string) {
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Get(url)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}
