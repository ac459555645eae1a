package stdlib_test

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/shoalpool/shoal/shoalpgx"
)

// holdProxy is a TCP forwarder between a pool and the test server that can
// hold what the client sends: while shut, the client's bytes wait at the
// proxy until Open, so that a test can keep a round trip (a ping) under
// way for as long as it needs, with real sockets and real deadlines under
// pgx.
type holdProxy struct {
	ln       net.Listener
	upstream string
	held     chan struct{} // gets a value when bytes first wait at the shut proxy

	mu     sync.Mutex
	cond   *sync.Cond
	shut   bool
	closed bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// proxyConfig points cfg's connections at a new holdProxy in front of the
// server cfg names. Close the proxy after the DB and before the pool: its
// goroutines are the test's, not the pool's.
func proxyConfig(t *testing.T, cfg *shoalpgx.Config) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hp := &holdProxy{
		ln:       ln,
		upstream: net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))),
		held:     make(chan struct{}, 1),
	}
	hp.cond = sync.NewCond(&hp.mu)
	hp.wg.Add(1)
	go hp.accept()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.ConnConfig.Fallbacks = nil
	return hp
}

// Shut holds what clients send from now on.
func (hp *holdProxy) Shut() { hp.setShut(true) }

// Open forwards what was held, and all that follows.
func (hp *holdProxy) Open() { hp.setShut(false) }

func (hp *holdProxy) setShut(on bool) {
	hp.mu.Lock()
	hp.shut = on
	hp.cond.Broadcast()
	hp.mu.Unlock()
}

// Cut closes the connections open now, both ends, as a server that went
// away would; new ones are forwarded as before.
func (hp *holdProxy) Cut() {
	hp.mu.Lock()
	conns := hp.conns
	hp.conns = nil
	hp.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines.
func (hp *holdProxy) Close() {
	hp.mu.Lock()
	hp.closed = true
	conns := hp.conns
	hp.conns = nil
	hp.cond.Broadcast()
	hp.mu.Unlock()
	hp.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	hp.wg.Wait()
}

// track remembers c for Close; false (and c closed) once closed.
func (hp *holdProxy) track(c net.Conn) bool {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	if hp.closed {
		c.Close()
		return false
	}
	hp.conns = append(hp.conns, c)
	return true
}

func (hp *holdProxy) accept() {
	defer hp.wg.Done()
	for {
		client, err := hp.ln.Accept()
		if err != nil || !hp.track(client) {
			return
		}
		server, err := net.Dial("tcp", hp.upstream)
		if err != nil {
			client.Close()
			continue
		}
		if !hp.track(server) {
			return
		}
		hp.wg.Add(2)
		go func() {
			defer hp.wg.Done()
			_, _ = io.Copy(client, server)
			client.Close()
		}()
		go func() {
			defer hp.wg.Done()
			hp.forward(server, client)
			server.Close()
		}()
	}
}

// forward copies what the client sends to the server, holding it while
// the proxy is shut.
func (hp *holdProxy) forward(server, client net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			hp.mu.Lock()
			if hp.shut {
				select {
				case hp.held <- struct{}{}:
				default:
				}
			}
			for hp.shut && !hp.closed {
				hp.cond.Wait()
			}
			closed := hp.closed
			hp.mu.Unlock()
			if closed {
				return
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
