package shoalhttp

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2"
)

// An HTTP/2 connection silent for 30 seconds is pinged, so that one the
// network dropped without a word is found and replaced: a server of raw
// frames on a pipe sees no PING at 29s and one by 31s.
func TestH2ConnectionIsPingedAfter30sOfSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srvConn, cliConn := net.Pipe()
		tr, err := NewTransport(Options{H2CPriorKnowledge: true, MinConns: -1,
			DialContext: func(context.Context, string, string) (net.Conn, error) { return cliConn, nil }})
		if err != nil {
			t.Fatal(err)
		}
		var pingAt atomic.Int64
		start := time.Now()
		go func() {
			preface := make([]byte, len(http2.ClientPreface))
			if _, err := io.ReadFull(srvConn, preface); err != nil {
				return
			}
			fr := http2.NewFramer(srvConn, srvConn)
			writes := make(chan func(), 16)
			go func() {
				for w := range writes {
					w()
				}
			}()
			defer close(writes)
			writes <- func() { fr.WriteSettings() }
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				switch f := f.(type) {
				case *http2.SettingsFrame:
					if !f.IsAck() {
						writes <- func() { fr.WriteSettingsAck() }
					}
				case *http2.PingFrame:
					if !f.IsAck() {
						if time.Since(start) > time.Second { // not the settings exchange
							pingAt.CompareAndSwap(0, int64(time.Since(start)))
						}
						d := f.Data
						writes <- func() { fr.WritePing(true, d) }
					}
				}
			}
		}()
		if err := tr.Warm(context.Background(), "http://h2c.example:80"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(29 * time.Second)
		synctest.Wait()
		if pingAt.Load() != 0 {
			t.Fatalf("pinged after %v", time.Duration(pingAt.Load()))
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if pingAt.Load() == 0 {
			t.Fatal("no ping after 31s of silence")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		tr.Close(ctx)
		srvConn.Close()
		cliConn.Close()
	})
}
