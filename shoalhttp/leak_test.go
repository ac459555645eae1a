package shoalhttp

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/leaktest"
	"github.com/shoalpool/shoal/internal/syncbuf"
)

// sendAndForget sends a GET and returns its response with the body unread
// and open: the leak the reports must name.
func sendAndForget(t *testing.T, tr http.RoundTripper, url string) *http.Response {
	t.Helper()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp
}

// TestLeakThresholdReportsAnUnclosedBody: a response body left open past
// LeakThreshold is reported once, through the Observer, the Logger and
// Stats, with the stack of the request; a body closed in time is never
// reported. Over HTTP/1.1 the request holds a connection, over HTTP/2 a
// stream.
func TestLeakThresholdReportsAnUnclosedBody(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a body nobody reads")
	})
	h1, _ := newH1Server(t, handler)
	h2 := startH2C(t, handler)
	const threshold = 50 * time.Millisecond
	for _, tc := range []struct {
		name, url string
		opts      Options
	}{
		{"HTTP/1.1", h1.URL, Options{}},
		{"HTTP/2", h2.url(), Options{H2CPriorKnowledge: true, MinConns: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := &leaktest.Recorder{}
			var logs syncbuf.Buffer
			opts := tc.opts
			opts.LeakThreshold = threshold
			opts.Observer = func(string) shoal.Observer { return obs }
			opts.Logger = newTestLogger(&logs)
			tr := newTestTransport(t, opts)

			// A request read and closed at once: never a leak.
			if code, body := get(t, tr, tc.url); code != 200 || body != "a body nobody reads" {
				t.Fatalf("got %d %q", code, body)
			}
			resp := sendAndForget(t, tr, tc.url)
			eventually(t, "the unclosed body to be reported", func() bool {
				_, st := onlyStats(t, tr)
				return st.Leaked == 1
			})
			// Long enough for several more scans: the leak is reported once.
			time.Sleep(4 * threshold)
			resp.Body.Close()
			if _, st := onlyStats(t, tr); st.Leaked != 1 {
				t.Errorf("Stats().Leaked = %d after one unclosed body, want 1", st.Leaked)
			}
			reports := obs.Reports()
			if len(reports) != 1 {
				t.Fatalf("observer got %d leak reports, want 1: %+v", len(reports), reports)
			}
			r := reports[0]
			// Function is the first caller outside shoal's packages, which
			// this test is not (see TestLeakReportNamesTheCaller).
			if !strings.Contains(r.Stack, ".sendAndForget") {
				t.Errorf("report's stack does not show the function that sent the request:\n%s", r.Stack)
			}
			if r.Held < threshold || r.Reclaimed {
				t.Errorf("report held %s, reclaimed %v; want >= %s, not reclaimed", r.Held, r.Reclaimed, threshold)
			}
			logged := logs.String()
			if !strings.Contains(logged, "lease held past LeakThreshold") || !strings.Contains(logged, "sendAndForget") {
				t.Errorf("no Warn naming sendAndForget in the log:\n%s", logged)
			}

			// The connection or stream came back when the body closed.
			if code, _ := get(t, tr, tc.url); code != 200 {
				t.Fatalf("a request after the leak closed got %d", code)
			}
			if _, st := onlyStats(t, tr); st.Leases != 0 {
				t.Errorf("Stats().Leases = %d after every body closed, want 0", st.Leases)
			}
		})
	}
}
