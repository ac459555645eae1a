package shoalhttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// loweringServer is a raw h2c server that announces initial streams and, when
// a request for /hold arrives, leaves it unanswered and lowers its
// SETTINGS_MAX_CONCURRENT_STREAMS to lowerTo at once; when cue is set, the
// first connection to receive from cue lowers it then instead. lowered
// receives once the client has acknowledged the new settings, or closed
// the connection after them. Every other request gets a 200.
type loweringServer struct {
	url      string
	lowered  chan struct{}
	cue      chan struct{}
	accepted atomic.Int64
	// hangUpOnGoAway has a connection close as soon as the client's
	// GOAWAY arrives, as a server does when no stream is left open.
	hangUpOnGoAway atomic.Bool
}

func startLoweringServer(t *testing.T, initial, lowerTo uint32) *loweringServer {
	t.Helper()
	return startLowering(t, initial, lowerTo, nil)
}

func startLowering(t *testing.T, initial, lowerTo uint32, cue chan struct{}) *loweringServer {
	t.Helper()
	s := &loweringServer{lowered: make(chan struct{}, 1), cue: cue}
	s.url = "http://" + serveTCPDone(t, func(c net.Conn, done <-chan struct{}, serving *sync.WaitGroup) {
		s.accepted.Add(1)
		s.serve(c, initial, lowerTo, done, serving)
	})
	return s
}

func (s *loweringServer) serve(c net.Conn, initial, lowerTo uint32, done <-chan struct{}, serving *sync.WaitGroup) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	// wmu guards the frames written on a cue, the rest, and the counts of
	// SETTINGS: acks come in the order of the frames, so the lowered one's
	// is told from the initial one's, which may come after a PING's.
	var wmu sync.Mutex
	var sent, loweredAt, acks int
	told := false
	tell := func() { // under wmu
		if loweredAt != 0 && !told {
			told = true
			s.lowered <- struct{}{}
		}
	}
	lowerLocked := func() {
		sent++
		loweredAt = sent
		fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: lowerTo})
	}
	sent++
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: initial})
	if s.cue != nil {
		serving.Go(func() {
			select {
			case <-s.cue:
				wmu.Lock()
				lowerLocked()
				wmu.Unlock()
			case <-done:
			}
		})
	}
	for {
		f, err := fr.ReadFrame()
		wmu.Lock()
		if err != nil {
			// A client that closes the connection as it reads the
			// new limit (no stream open on it) never acknowledges it.
			tell()
			wmu.Unlock()
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			} else if acks++; acks == loweredAt {
				tell()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			if s.hangUpOnGoAway.Load() {
				wmu.Unlock()
				return
			}
		case *http2.MetaHeadersFrame:
			if f.PseudoValue("path") == "/hold" {
				if s.cue == nil {
					lowerLocked()
				}
				break
			}
			var hb bytes.Buffer
			hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: hb.Bytes(), EndHeaders: true})
			fr.WriteData(f.StreamID, true, []byte("ok"))
		}
		wmu.Unlock()
	}
}

// TestH2ServerLowersStreamLimitMidConnection: a server that lowers its
// SETTINGS_MAX_CONCURRENT_STREAMS while a request is in flight gets no
// more requests on that connection than it now allows; the next request
// goes to a new connection instead of waiting inside x/net for a stream
// the server will not give. A limit of 0 takes no new request at all
// (RFC 9113, section 6.5.2). The deadline is only the failure's bound.
func TestH2ServerLowersStreamLimitMidConnection(t *testing.T) {
	for _, lowerTo := range []uint32{1, 0} {
		t.Run(fmt.Sprintf("to%d", lowerTo), func(t *testing.T) {
			srv := startLoweringServer(t, 100, lowerTo)
			tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
			if code, _ := get(t, tr, srv.url+"/"); code != http.StatusOK {
				t.Fatalf("first GET: status %d", code)
			}

			hctx, hcancel := context.WithCancel(context.Background())
			held := make(chan struct{})
			defer func() { hcancel(); <-held }()
			go func() {
				defer close(held)
				req, _ := http.NewRequestWithContext(hctx, http.MethodGet, srv.url+"/hold", nil)
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}()
			<-srv.lowered

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				_, st := onlyStats(t, tr)
				t.Fatalf("GET after the server lowered its stream limit to %d: %v; %+v", lowerTo, err, st)
			}
			resp.Body.Close()
			if n := srv.accepted.Load(); n != 2 {
				t.Errorf("server accepted %d connections, want 2 (the next request on a new one)", n)
			}
		})
	}
}

// TestH2LimitLoweredAfterFollowLimit: a SETTINGS frame that lowers the
// stream limit to the streams in flight (or to 0) after a request has
// passed followLimit, but before x/net opened its stream, does not leave
// that request waiting inside x/net for a stream that will not come (the
// one in flight never ends): it goes to a new connection. The frame is
// sent, and acknowledged, while the request's GotConn runs, which is after
// followLimit. The deadline is only the failure's bound.
func TestH2LimitLoweredAfterFollowLimit(t *testing.T) {
	for _, lowerTo := range []uint32{1, 0} {
		t.Run(fmt.Sprintf("to%d", lowerTo), func(t *testing.T) {
			srv := startLowering(t, 100, lowerTo, make(chan struct{}))
			tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
			if code, _ := get(t, tr, srv.url+"/"); code != http.StatusOK {
				t.Fatalf("first GET: status %d", code)
			}

			hctx, hcancel := context.WithCancel(context.Background())
			held, sent := make(chan struct{}), make(chan struct{})
			defer func() { hcancel(); <-held }()
			go func() {
				defer close(held)
				trace := &httptrace.ClientTrace{WroteHeaders: func() { close(sent) }}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(hctx, trace), http.MethodGet, srv.url+"/hold", nil)
				if resp, err := tr.RoundTrip(req); err == nil {
					resp.Body.Close()
				}
			}()
			<-sent

			var cued atomic.Bool
			trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
				if cued.CompareAndSwap(false, true) {
					srv.cue <- struct{}{}
					<-srv.lowered
				}
			}}
			ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				_, st := onlyStats(t, tr)
				t.Fatalf("GET whose connection's limit fell to %d after followLimit: %v; %+v", lowerTo, err, st)
			}
			resp.Body.Close()
			if n := srv.accepted.Load(); n != 2 {
				t.Errorf("server accepted %d connections, want 2 (the request moved to a new one)", n)
			}
		})
	}
}

// TestH2LimitLoweredOnAFreshConnAfterFollowLimit: the same on a
// connection that has not opened a stream yet. Once x/net has closed it
// (Shutdown does that, soon after, to a connection with no stream), it
// fails a request there as one that "could not be established", which is
// no less a request the server never saw, and it goes to a new connection
// too. Which of the two errors the request meets is a race, so the case
// runs a number of times.
func TestH2LimitLoweredOnAFreshConnAfterFollowLimit(t *testing.T) {
	for range 30 {
		srv := startLowering(t, 100, 0, make(chan struct{}))
		tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
		var cued atomic.Bool
		trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {
			if cued.CompareAndSwap(false, true) {
				srv.cue <- struct{}{}
				<-srv.lowered
			}
		}}
		ctx, cancel := context.WithTimeout(httptrace.WithClientTrace(context.Background(), trace), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			_, st := onlyStats(t, tr)
			cancel()
			t.Fatalf("GET whose fresh connection's limit fell to 0 after followLimit: %v; %+v", err, st)
		}
		resp.Body.Close()
		cancel()
		if n := srv.accepted.Load(); n != 2 {
			t.Fatalf("server accepted %d connections, want 2 (the request moved to a new one)", n)
		}
	}
}

// TestH2ServerAllowingNoStreamsFailsTheDial: a server whose first SETTINGS
// allow no stream at all fails the dial with an error that says so, where
// a limit of 0 once meant none and the request waited in x/net until its
// context ended.
func TestH2ServerAllowingNoStreamsFailsTheDial(t *testing.T) {
	srv := startLoweringServer(t, 0, 0)
	tr := newTestTransport(t, Options{H2CPriorKnowledge: true, MinConns: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/", nil)
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("GET from a server allowing no streams succeeded")
	}
	if !strings.Contains(err.Error(), "SETTINGS_MAX_CONCURRENT_STREAMS 0") {
		t.Fatalf("GET from a server allowing no streams: %v, want an error naming the limit of 0", err)
	}
}

// TestSettingsWatchFollowsFramesAcrossReads: the watch finds every
// MAX_CONCURRENT_STREAMS in the server's SETTINGS however the bytes are
// cut into reads, and nothing in other frames or in SETTINGS acks.
func TestSettingsWatchFollowsFramesAcrossReads(t *testing.T) {
	var wire bytes.Buffer
	fr := http2.NewFramer(&wire, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20}, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	// A DATA payload that reads as a SETTINGS frame setting the limit to 7.
	fake := []byte{0, 0, 6, 0x4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 7}
	fr.WriteData(1, false, fake)
	fr.WriteSettingsAck()
	fr.WritePing(false, [8]byte{})
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
	fr.WriteData(1, true, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0})
	want := []uint32{100, 1, 0}
	for _, size := range []int{1, 2, 5, 9, 10, 64, wire.Len()} {
		var got []uint32
		w := &settingsWatch{onLimit: func(n uint32) { got = append(got, n) }}
		for p := wire.Bytes(); len(p) > 0; {
			k := min(size, len(p))
			w.scan(p[:k])
			p = p[k:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("reads of %d bytes: limits %v, want %v", size, got, want)
		}
	}
}
