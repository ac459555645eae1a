package shoalhttp

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// holdServer is a raw h2c server that leaves requests for /hold
// unanswered until release is closed, and lowers its
// SETTINGS_MAX_CONCURRENT_STREAMS to lowerTo once holds of them are open
// on a connection. lowered receives, as the client acknowledges the new
// limit, whether a GOAWAY from the client came before the acknowledgement:
// the client's read loop sends one, if it does, as it reads the frame.
type holdServer struct {
	url      string
	accepted atomic.Int64
	lowered  chan bool
	release  chan struct{}
}

func startHoldServer(t *testing.T, holds int, lowerTo uint32) *holdServer {
	t.Helper()
	s := &holdServer{lowered: make(chan bool, 1), release: make(chan struct{})}
	s.url = "http://" + serveTCPDone(t, func(c net.Conn, done <-chan struct{}, serving *sync.WaitGroup) {
		s.accepted.Add(1)
		s.serve(c, holds, lowerTo, done, serving)
	})
	return s
}

func (s *holdServer) serve(c net.Conn, holds int, lowerTo uint32, done <-chan struct{}, serving *sync.WaitGroup) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	// wmu guards the frames written and the state below: the held
	// streams are answered from another goroutine.
	var wmu sync.Mutex
	var held []uint32
	released, goAway := false, false
	sent, loweredAt, acks := 1, 0, 0
	answer := func(id uint32) {
		var hb bytes.Buffer
		hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, []byte("ok"))
	}
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	serving.Go(func() {
		select {
		case <-s.release:
		case <-done:
			return
		}
		wmu.Lock()
		defer wmu.Unlock()
		released = true
		for _, id := range held {
			answer(id)
		}
	})
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		wmu.Lock()
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			} else if acks++; acks == loweredAt {
				s.lowered <- goAway
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			goAway = true
		case *http2.MetaHeadersFrame:
			if f.PseudoValue("path") == "/hold" && !released {
				if held = append(held, f.StreamID); len(held) == holds {
					sent++
					loweredAt = sent
					fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: lowerTo})
				}
				break
			}
			answer(f.StreamID)
		}
		wmu.Unlock()
	}
}

// A server that lowers its stream limit below the streams open on a
// connection, while no request waits for a stream there, keeps the
// connection: the client sends no GOAWAY, the streams open finish, and
// the requests after them are served on it, as the new limit allows,
// rather than on a new connection the server did not ask for.
func TestH2LimitBelowItsStreamsKeepsTheConnection(t *testing.T) {
	const holds = 3
	srv := startHoldServer(t, holds, 1)
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
	if code, _ := get(t, tr, srv.url+"/"); code != http.StatusOK {
		t.Fatalf("first GET: status %d", code)
	}
	errs := make(chan error, holds)
	for range holds {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.url+"/hold", nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	if goAway := <-srv.lowered; goAway {
		t.Errorf("the client sent a GOAWAY as the server lowered its limit to 1 under %d open streams, with no request waiting for one", holds)
	}
	close(srv.release)
	for range holds {
		if err := <-errs; err != nil {
			t.Fatalf("a held request: %v", err)
		}
	}
	for range 2 {
		if code, _ := get(t, tr, srv.url+"/"); code != http.StatusOK {
			t.Fatalf("GET after the held requests: status %d", code)
		}
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("server accepted %d connections, want 1: the connection whose limit fell serves on", n)
	}
}
