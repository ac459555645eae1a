package shoalhttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInfluxDBWritesAreCountedExactly writes 10,000 points from 100
// goroutines, one point per request, and checks that InfluxDB holds exactly
// the points it acknowledged.
func TestInfluxDBWritesAreCountedExactly(t *testing.T) {
	base := requireService(t, "SHOAL_TEST_INFLUXDB")
	tr := newTestTransport(t, Options{MaxConns: 32})
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	measurement := fmt.Sprintf("shoalhttp_%d", time.Now().UnixNano())
	const goroutines, perGoroutine = 100, 100

	var acked, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				// A distinct series and timestamp per point: no write can
				// overwrite another.
				line := fmt.Sprintf("%s,g=%d v=%di %d", measurement, g, i, int64(g*perGoroutine+i+1))
				resp, err := client.Post(base+"/write?db=shoal_test&precision=ns", "text/plain", strings.NewReader(line))
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusNoContent {
					acked.Add(1)
				} else {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, resp.Status)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Errorf("%d writes failed, first: %v", failed.Load(), firstErr.Load())
	}

	q := url.Values{"db": {"shoal_test"}, "q": {fmt.Sprintf(`SELECT count(v) FROM "%s"`, measurement)}}
	resp, err := client.Get(base + "/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
			Error string `json:"error"`
		} `json:"results"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("decoding count: %v", err)
	}
	var count int64
	if len(out.Results) == 1 && len(out.Results[0].Series) == 1 && len(out.Results[0].Series[0].Values) == 1 {
		n, _ := out.Results[0].Series[0].Values[0][1].(json.Number)
		count, _ = n.Int64()
	} else {
		t.Fatalf("unexpected query result: %+v", out)
	}
	if count != acked.Load() {
		t.Errorf("InfluxDB counts %d points, %d writes were acknowledged", count, acked.Load())
	}
	if acked.Load() != goroutines*perGoroutine {
		t.Errorf("%d of %d writes acknowledged", acked.Load(), goroutines*perGoroutine)
	}
	st := tr.Stats()
	for origin, s := range st {
		if s.TotalConns > 32 {
			t.Errorf("%s: %d connections open, MaxConns 32", origin, s.TotalConns)
		}
	}

	// Drop the measurement so repeated runs do not grow the database.
	drop := url.Values{"db": {"shoal_test"}, "q": {fmt.Sprintf(`DROP MEASUREMENT "%s"`, measurement)}}
	if resp, err := client.Post(base+"/query?"+drop.Encode(), "", nil); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestClickHouseNumbersUnderConcurrency runs SELECT number FROM numbers(5)
// from many goroutines and checks every answer.
func TestClickHouseNumbersUnderConcurrency(t *testing.T) {
	base := requireService(t, "SHOAL_TEST_CLICKHOUSE")
	tr := newTestTransport(t, Options{MaxConns: 8})
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	query := base + "/?" + url.Values{"query": {"SELECT number FROM numbers(5)"}}.Encode()
	const goroutines, perGoroutine = 16, 40
	var wg sync.WaitGroup
	var bad atomic.Int64
	var firstBad atomic.Value
	for range goroutines {
		wg.Go(func() {
			for range perGoroutine {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, query, nil)
				resp, err := client.Do(req)
				if err != nil {
					cancel()
					bad.Add(1)
					firstBad.CompareAndSwap(nil, err.Error())
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if err != nil || resp.StatusCode != 200 || string(b) != "0\n1\n2\n3\n4\n" {
					bad.Add(1)
					firstBad.CompareAndSwap(nil, fmt.Sprintf("%d %q %v", resp.StatusCode, b, err))
				}
			}
		})
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d of %d answers wrong, first: %v", bad.Load(), goroutines*perGoroutine, firstBad.Load())
	}
	for origin, s := range tr.Stats() {
		if s.TotalConns > 8 || s.Leases != 0 {
			t.Errorf("%s: %+v", origin, s)
		}
	}
}
