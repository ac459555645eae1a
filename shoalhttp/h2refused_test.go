package shoalhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// refusingServer is a raw h2c server that answers REFUSED_STREAM to its
// first refuse streams, as soon as their HEADERS arrive, and echoes the
// body of every later one with a 200. streams counts the streams opened.
type refusingServer struct {
	url     string
	refuse  int32
	streams atomic.Int32
}

func startRefusingServer(t *testing.T, refuse int32) *refusingServer {
	t.Helper()
	s := &refusingServer{refuse: refuse}
	s.url = "http://" + serveTCP(t, s.serve)
	return s
}

func (s *refusingServer) serve(c net.Conn) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	if fr.WriteSettings() != nil {
		return
	}
	refused := map[uint32]bool{}
	bodies := map[uint32]*bytes.Buffer{}
	answer := func(id uint32) error {
		var hb bytes.Buffer
		hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			return err
		}
		return fr.WriteData(id, true, bodies[id].Bytes())
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		case *http2.HeadersFrame:
			id := f.StreamID
			if s.streams.Add(1) <= s.refuse {
				refused[id] = true
				if fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) != nil {
					return
				}
				break
			}
			bodies[id] = &bytes.Buffer{}
			if f.StreamEnded() && answer(id) != nil {
				return
			}
		case *http2.DataFrame:
			id := f.StreamID
			if refused[id] || bodies[id] == nil {
				break
			}
			bodies[id].Write(f.Data())
			if f.StreamEnded() && answer(id) != nil {
				return
			}
		}
	}
}

// TestHTTP2RefusedStreamIsRetriedOnce: a stream the server refuses
// (REFUSED_STREAM, which says it processed nothing of it) is sent once
// more, with its body from GetBody, and the caller gets the second
// answer; a server that refuses the second attempt too gets no third, and
// the caller gets the refusal. The deadline is only the failure's bound.
func TestHTTP2RefusedStreamIsRetriedOnce(t *testing.T) {
	const payload = "a body the server gets whole on the second attempt"
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run(method, func(t *testing.T) {
			srv := startRefusingServer(t, 1)
			tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(payload) // NewRequest sets GetBody
			}
			req, err := http.NewRequestWithContext(ctx, method, srv.url+"/", body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s refused once: %v, want the retry's answer", method, err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s refused once: status %d, body error %v", method, resp.StatusCode, err)
			}
			if method == http.MethodPost && string(got) != payload {
				t.Errorf("server got body %q on the retry, want %q", got, payload)
			}
			if n := srv.streams.Load(); n != 2 {
				t.Errorf("server saw %d streams, want 2 (the refused one and its retry)", n)
			}
		})
	}

	t.Run("twice", func(t *testing.T) {
		srv := startRefusingServer(t, 2)
		tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
			t.Fatal("GET refused twice succeeded")
		}
		var se http2.StreamError
		if !errors.As(err, &se) || se.Code != http2.ErrCodeRefusedStream {
			t.Fatalf("GET refused twice: %v, want the refusal", err)
		}
		if n := srv.streams.Load(); n != 2 {
			t.Errorf("server saw %d streams, want 2 (one retry, no more)", n)
		}
	})
}
