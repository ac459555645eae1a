package shoalhttp

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// traceRecorder keeps the httptrace hooks a request fired, in order, with
// what GotConn and PutIdleConn said.
type traceRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *traceRecorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *traceRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// trace returns a ClientTrace with every client-side hook set.
func (r *traceRecorder) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(hostPort string) { r.add("GetConn(%s)", hostPort) },
		GotConn: func(i httptrace.GotConnInfo) {
			r.add("GotConn(Reused=%v WasIdle=%v IdleTime>0=%v Conn=%v)", i.Reused, i.WasIdle, i.IdleTime > 0, i.Conn != nil)
		},
		PutIdleConn:          func(err error) { r.add("PutIdleConn(err=%v)", err) },
		GotFirstResponseByte: func() { r.add("GotFirstResponseByte") },
		Got100Continue:       func() { r.add("Got100Continue") },
		Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			r.add("Got1xxResponse(%d)", code)
			return nil
		},
		DNSStart:          func(httptrace.DNSStartInfo) { r.add("DNSStart") },
		DNSDone:           func(i httptrace.DNSDoneInfo) { r.add("DNSDone(err=%v)", i.Err) },
		ConnectStart:      func(network, _ string) { r.add("ConnectStart(%s)", network) },
		ConnectDone:       func(network, _ string, err error) { r.add("ConnectDone(%s err=%v)", network, err) },
		TLSHandshakeStart: func() { r.add("TLSHandshakeStart") },
		TLSHandshakeDone: func(cs tls.ConnectionState, err error) {
			r.add("TLSHandshakeDone(complete=%v err=%v)", cs.HandshakeComplete, err)
		},
		WroteHeaders:    func() { r.add("WroteHeaders") },
		Wait100Continue: func() { r.add("Wait100Continue") },
		WroteRequest:    func(i httptrace.WroteRequestInfo) { r.add("WroteRequest(err=%v)", i.Err) },
	}
}

// tracedGet sends a GET with a fresh recorder through rt, reads the body
// to the end and closes it, and returns the hooks fired.
func tracedGet(t *testing.T, rt http.RoundTripper, url string) []string {
	t.Helper()
	rec := &traceRecorder{}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), rec.trace()))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("reading body: %v", err)
	}
	resp.Body.Close()
	return rec.got()
}

// sameHooks reports whether two requests fired the same hooks in the same
// order, where an order is defined. GotFirstResponseByte, Got100Continue
// and Got1xxResponse fire on the goroutine that reads the connection, and the
// others on the one that writes it: the response can arrive before the
// writer has called WroteHeaders and WroteRequest (net/http's HTTP/2 does
// both ways). So each side's hooks are compared in order on their own, and
// the reader's must come after GotConn and before PutIdleConn.
func sameHooks(got, want []string) bool {
	reader := func(e string) bool {
		return e == "GotFirstResponseByte" || e == "Got100Continue" || strings.HasPrefix(e, "Got1xxResponse")
	}
	split := func(events []string) (r, w []string, ok bool) {
		gotConn := slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, "GotConn") })
		put := slices.IndexFunc(events, func(e string) bool { return strings.HasPrefix(e, "PutIdleConn") })
		ok = true
		for i, e := range events {
			if !reader(e) {
				w = append(w, e)
				continue
			}
			r = append(r, e)
			if i < gotConn || (put >= 0 && i > put) {
				ok = false
			}
		}
		return r, w, ok
	}
	gr, gw, gok := split(got)
	wr, ww, wok := split(want)
	return gok && wok && slices.Equal(gr, wr) && slices.Equal(gw, ww)
}

// The same requests through net/http's Transport and through shoalhttp
// fire the same hooks in the same order (see sameHooks), with the same
// GotConn flags, over HTTP/1.1 (plain and TLS) and HTTP/2 (TLS): a first
// request on a fresh connection (to "localhost", so a name is resolved),
// one on the reused idle connection, and one sent while another response
// is still streaming (a second connection for HTTP/1.1, through the pool's
// dial; a second stream on a busy connection for HTTP/2). Every response
// comes after a 103 Early Hints.
func TestTraceHooksMatchNetHTTP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tls, h2 bool
	}{{"h1-plain", false, false}, {"h1-tls", true, false}, {"h2-tls", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var holdMu sync.Mutex
			var hold chan struct{} // a GET of /hold streams until it is closed
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hold" {
					holdMu.Lock()
					wait := hold
					holdMu.Unlock()
					io.WriteString(w, "streaming")
					http.NewResponseController(w).Flush()
					select {
					case <-wait:
					case <-r.Context().Done():
					}
					return
				}
				w.Header().Set("Link", "</style.css>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
				io.WriteString(w, r.Proto)
			})
			var srv *httptest.Server
			var tlsCfg *tls.Config
			if tc.tls {
				srv, _, tlsCfg = newTLSServer(t, h, tc.h2)
				tlsCfg.ServerName = "example.com" // in httptest's certificate; localhost is not
			} else {
				srv, _ = newH1Server(t, h)
			}
			url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/"

			base := &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: tc.h2}
			defer base.CloseIdleConnections()
			// One HTTP/2 connection, as net/http keeps: with two, a
			// request could go to the other, fresh one.
			tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MinConns: -1})

			compare := func(what string, want, got []string) {
				t.Helper()
				t.Logf("%s: %s", what, strings.Join(got, ", "))
				if !sameHooks(got, want) {
					t.Errorf("%s: shoalhttp fired\n\t%s\nnet/http fired\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
				if !slices.ContainsFunc(want, func(e string) bool { return strings.HasPrefix(e, "GotConn") }) {
					t.Fatalf("%s: net/http fired no GotConn: %v", what, want)
				}
			}
			compare("fresh connection", tracedGet(t, base, url), tracedGet(t, tr, url))
			time.Sleep(time.Millisecond) // an idle time to report
			compare("reused connection", tracedGet(t, base, url), tracedGet(t, tr, url))

			var busy []string
			for _, rt := range []http.RoundTripper{base, tr} {
				holdMu.Lock()
				hold = make(chan struct{})
				release := hold
				holdMu.Unlock()
				resp, err := rt.RoundTrip(mustRequest(t, url+"hold"))
				if err != nil {
					t.Fatal(err)
				}
				busy = append(busy, strings.Join(tracedGet(t, rt, url), "|"))
				close(release)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			compare("while another response streams", strings.Split(busy[0], "|"), strings.Split(busy[1], "|"))
		})
	}
}

// Through a proxy, GetConn names the proxy's host:port and the dial hooks
// are the proxy's, as with net/http: plain http forwarded, https through a
// CONNECT tunnel (the TLS hooks are the origin's handshake, inside it).
func TestTraceHooksThroughProxyMatchNetHTTP(t *testing.T) {
	for _, overTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https-connect"}[overTLS], func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
			var srv *httptest.Server
			var tlsCfg *tls.Config
			if overTLS {
				srv, _, tlsCfg = newTLSServer(t, h, false)
			} else {
				srv, _ = newH1Server(t, h)
			}
			px := newTestProxy(t, "", "")
			// Each transport gets its own connection to the proxy: the
			// proxy's own pool to the origin is shared, which the client
			// side does not see.
			pu := strings.Replace(px.url.String(), "127.0.0.1", "localhost", 1)
			proxyURL, _ := url.Parse(pu)
			base := &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyURL(proxyURL)}
			defer base.CloseIdleConnections()
			tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, Proxy: fixedProxy(proxyURL)})
			for _, what := range []string{"fresh connection", "reused connection"} {
				want := tracedGet(t, base, srv.URL+"/")
				got := tracedGet(t, tr, srv.URL+"/")
				t.Logf("%s: %s", what, strings.Join(got, ", "))
				if !sameHooks(got, want) {
					t.Errorf("%s: shoalhttp fired\n\t%s\nnet/http fired\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
			}
		})
	}
}

// A dial fires its httptrace hooks on the oldest traced request waiting
// for a connection, and on no other.
func TestDialHooksGoToTheOldestWaiter(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok")
	})
	srv, _ := newH1Server(t, h)
	tr := newTestTransport(t, Options{MaxConns: 1})
	held := make(chan struct{})
	go func() { defer close(held); get(t, tr, srv.URL+"/hold") }()
	stat := func() (s waitStats) {
		for _, st := range tr.Stats() {
			s = waitStats{st.Leases, st.Waiting}
		}
		return s
	}
	eventually(t, "the hold request on the only connection", func() bool { return stat().leases == 1 })
	var starts [2]atomic.Int32
	var wg sync.WaitGroup
	for i := range 2 {
		ct := &httptrace.ClientTrace{ConnectStart: func(string, string) { starts[i].Add(1) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), ct), "GET", srv.URL+"/", nil)
		wg.Go(func() {
			resp, err := tr.RoundTrip(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
		eventually(t, "waiting", func() bool { return stat().waiting == i+1 })
	}
	close(release)
	wg.Wait()
	<-held
	if a, b := starts[0].Load(), starts[1].Load(); a != 1 || b != 0 {
		t.Fatalf("ConnectStart on the older %d, the newer %d; want 1 and 0", a, b)
	}
}

// waitStats is what TestDialHooksGoToTheOldestWaiter reads of an origin.
type waitStats struct{ leases, waiting int }
