package shoalhttp_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
)

// firstLeak keeps the first leak report it is told of.
type firstLeak struct {
	shoal.BaseObserver
	once   sync.Once
	report chan shoal.LeakReport
}

func (o *firstLeak) ObserveLeak(r shoal.LeakReport) { o.once.Do(func() { o.report <- r }) }

// forgetBody sends a GET and leaves its response body open: the function a
// leak report must name.
func forgetBody(t *testing.T, client *http.Client, url string) *http.Response {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}

// TestLeakReportNamesTheCaller: a leak report names the program's function
// that sent the request, not net/http's client nor shoalhttp, over
// HTTP/1.1 and over HTTP/2. This test is outside package shoalhttp so that
// its functions count as the program's.
func TestLeakReportNamesTheCaller(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	h1 := httptest.NewServer(handler)
	defer h1.Close()
	h2 := httptest.NewUnstartedServer(handler)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	roots := x509.NewCertPool()
	roots.AddCert(h2.Certificate())

	for _, tc := range []struct{ url, proto string }{{h1.URL, "HTTP/1.1"}, {h2.URL, "HTTP/2.0"}} {
		t.Run(tc.proto, func(t *testing.T) {
			obs := &firstLeak{report: make(chan shoal.LeakReport, 1)}
			tr, err := shoalhttp.NewTransport(shoalhttp.Options{
				LeakThreshold:   50 * time.Millisecond,
				Observer:        func(string) shoal.Observer { return obs },
				TLSClientConfig: &tls.Config{RootCAs: roots},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := tr.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			resp := forgetBody(t, &http.Client{Transport: tr}, tc.url)
			defer resp.Body.Close()
			if resp.Proto != tc.proto {
				t.Fatalf("response over %s, want %s", resp.Proto, tc.proto)
			}
			select {
			case r := <-obs.report:
				if !strings.HasSuffix(r.Function, "_test.forgetBody") {
					t.Errorf("report names %q, want shoalhttp_test.forgetBody; stack:\n%s", r.Function, r.Stack)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no leak report 10s after a body was left open past a 50ms LeakThreshold")
			}
		})
	}
}
