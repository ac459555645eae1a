package shoalhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// A response head larger than MaxResponseHeaderBytes fails the request
// with an error naming the option, as net/http bounds it; under the bound
// (or with the 10 MiB default) the same answer is fine.
func TestMaxResponseHeaderBytes(t *testing.T) {
	big := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\nContent-Length: 2\r\n\r\nok"
	srv := startRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			if _, err := io.WriteString(c, big); err != nil {
				return
			}
		}
	})
	for _, tc := range []struct {
		limit int64
		ok    bool
	}{{16 << 10, false}, {128 << 10, true}, {0, true}} {
		tr := newTestTransport(t, Options{MaxResponseHeaderBytes: tc.limit})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url(), nil)
		resp, err := tr.RoundTrip(req)
		cancel()
		if tc.ok {
			if err != nil {
				t.Errorf("limit %d: %v", tc.limit, err)
				continue
			}
			resp.Body.Close()
			continue
		}
		if err == nil {
			resp.Body.Close()
			t.Errorf("limit %d: a %d-byte head was accepted", tc.limit, len(big))
			continue
		}
		if !errors.Is(err, errHeadTooLarge) || !strings.Contains(err.Error(), "MaxResponseHeaderBytes (16384 bytes)") {
			t.Errorf("limit %d: %v, want an error naming MaxResponseHeaderBytes", tc.limit, err)
		}
	}
	_, err := NewTransport(Options{MaxResponseHeaderBytes: -1})
	var ce *shoal.ConfigError
	if !errors.As(err, &ce) || ce.Field != "MaxResponseHeaderBytes" {
		t.Errorf("NewTransport with MaxResponseHeaderBytes -1: %v, want a ConfigError naming the field", err)
	}
}

// MaxResponseHeaderBytes bounds an HTTP/2 response's header list as it
// bounds an HTTP/1.1 head, as http.Transport's field does for both: a head
// past it fails the request, and the same answer under the bound (or the
// 10 MiB default) is fine.
func TestMaxResponseHeaderBytesHTTP2(t *testing.T) {
	srv, _, tlsCfg := newH2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 16 { // many fields, none of them long: the list is what is too large
			w.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("a", 4<<10))
		}
		_, _ = io.WriteString(w, "ok")
	}), 0)
	for _, tc := range []struct {
		limit int64
		ok    bool
	}{{16 << 10, false}, {128 << 10, true}, {0, true}} {
		tr := newTestTransport(t, Options{TLSClientConfig: tlsCfg, MaxResponseHeaderBytes: tc.limit})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := tr.RoundTrip(req)
		cancel()
		if err == nil {
			if resp.ProtoMajor != 2 {
				t.Fatalf("the answer came over %s, want HTTP/2", resp.Proto)
			}
			resp.Body.Close()
		}
		if tc.ok && err != nil {
			t.Errorf("limit %d: %v", tc.limit, err)
		}
		if !tc.ok && err == nil {
			t.Errorf("limit %d: a 64 KiB HTTP/2 head was accepted", tc.limit)
		}
	}
}
