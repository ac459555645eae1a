package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"
)

// target is a server and the one request the workers send it.
type target struct {
	name string
	// do sends one request through client and checks the answer.
	do func(ctx context.Context, client *http.Client, worker, i int) error
	// tls trusts the target's certificate; nil for plain http.
	tls   *tls.Config
	close func()
}

// clickhouse: SELECT number FROM numbers(5) over the HTTP interface.
func clickhouse(base string) *target {
	u := strings.TrimRight(base, "/") + "/?" + url.Values{"query": {"SELECT number FROM numbers(5)"}}.Encode()
	return &target{
		name:  "ClickHouse",
		close: func() {},
		do:    getOK("ClickHouse", u, "0\n1\n2\n3\n4\n"),
	}
}

// influxdb: a one-point write per request.
func influxdb(base string) *target {
	base = strings.TrimRight(base, "/")
	measurement := fmt.Sprintf("shoalhttp_bench_%d", time.Now().UnixNano())
	u := base + "/write?db=shoal_test"
	return &target{
		name: "InfluxDB",
		close: func() {
			q := url.Values{"db": {"shoal_test"}, "q": {`DROP MEASUREMENT "` + measurement + `"`}}
			if resp, err := http.Post(base+"/query?"+q.Encode(), "", nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		},
		do: func(ctx context.Context, client *http.Client, worker, i int) error {
			line := fmt.Sprintf("%s,w=%d v=%di", measurement, worker, i)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(line))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "text/plain")
			body, status, err := send(client, req)
			if err != nil {
				return err
			}
			if status != http.StatusNoContent {
				return fmt.Errorf("InfluxDB answered %d %q", status, body)
			}
			return nil
		},
	}
}

// tlsServer: an in-process net/http server over TLS with HTTP/2 (100
// streams per connection), answering a short body.
func tlsServer() *target {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	}))
	srv.EnableHTTP2 = true
	srv.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 100}
	srv.StartTLS()
	cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	u := srv.URL + "/status"
	return &target{
		name:  "TLS (in-process, HTTP/2)",
		tls:   cfg,
		close: srv.Close,
		do:    getOK("TLS server", u, `{"status":"ok"}`),
	}
}

// getOK is a target's request that GETs u and fails unless server
// answers 200 with want.
func getOK(server, u, want string) func(ctx context.Context, client *http.Client, worker, i int) error {
	return func(ctx context.Context, client *http.Client, _, _ int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		body, status, err := send(client, req)
		if err != nil {
			return err
		}
		if status != http.StatusOK || body != want {
			return fmt.Errorf("%s answered %d %q", server, status, body)
		}
		return nil
	}
}

// send does req and reads the body to the end, as a careful client does so
// that its connection can be reused.
func send(client *http.Client, req *http.Request) (string, int, error) {
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b), resp.StatusCode, err
}
