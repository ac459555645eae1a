package embedded

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// MaxStreams is how many concurrent streams the embedded HTTP/2 server
// allows on one connection: 100, the common default (Go's, nghttp2's,
// Mint's) and the limit the EventStoreDB client ran into.
const MaxStreams = 100

// HTTPServer is a TLS HTTP server. Its handler answers "ok\n" after the
// simulated work asked for in the query (GET /?us=20000 waits 20 ms, capped
// at MaxWork), and stops waiting if the request is cancelled.
type HTTPServer struct {
	srv  *http.Server
	ln   net.Listener
	url  string
	done chan struct{}
	err  error
}

// StartHTTPServer listens on a random loopback port. With http2 the server
// offers HTTP/2 (capped at MaxStreams streams per connection) and HTTP/1.1
// by ALPN; without it, HTTP/1.1 only, as ClickHouse and InfluxDB speak.
func StartHTTPServer(cert *Cert, http2 bool) (*HTTPServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded: http server: %w", err)
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(http2)
	srv := &http.Server{
		Handler:           http.HandlerFunc(serveWork),
		TLSConfig:         cert.ServerTLS(),
		Protocols:         protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: MaxStreams},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          discardLogger(),
	}
	s := &HTTPServer{srv: srv, ln: ln, url: "https://" + ln.Addr().String() + "/", done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
		}
	}()
	return s, nil
}

// URL returns the server's base URL, ending in "/".
func (s *HTTPServer) URL() string { return s.url }

// Addr returns the server's host:port.
func (s *HTTPServer) Addr() string { return s.ln.Addr().String() }

// WorkURL returns the URL of a request that asks for work of server time.
func (s *HTTPServer) WorkURL(work time.Duration) string {
	return s.url + "?us=" + strconv.FormatInt(work.Microseconds(), 10)
}

// Close stops the server and closes every connection. Handlers that are
// still waiting see their request cancelled and return at once.
func (s *HTTPServer) Close() error {
	err := s.srv.Close()
	<-s.done
	if err == nil {
		err = s.err
	}
	return err
}

// handlerTimers lets the handler reuse timers: a benchmark makes many
// thousands of requests a second and the handler should cost little.
var handlerTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

var okBody = []byte("ok\n")

func serveWork(w http.ResponseWriter, r *http.Request) {
	if us := r.URL.Query().Get("us"); us != "" {
		micros, err := strconv.Atoi(us)
		if err != nil || micros < 0 {
			http.Error(w, "us: want a number of microseconds", http.StatusBadRequest)
			return
		}
		if work := min(time.Duration(micros)*time.Microsecond, MaxWork); work > 0 {
			t := handlerTimers.Get().(*time.Timer)
			t.Reset(work)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
			handlerTimers.Put(t)
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", "3")
	w.Write(okBody)
}
