package shoalpgx

import (
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// gate is a TCP forwarder between a pool and the server whose connections
// can be shut: what the client sends then waits at the gate until Open (or
// Cut), so that a test can hold a ping for as long as it needs. Shut holds
// only the connections open at the time; later ones pass.
type gate struct {
	ln       net.Listener
	upstream string
	held     chan struct{} // gets a value when bytes first wait at a shut gate

	mu     sync.Mutex
	cond   *sync.Cond
	pairs  []*gatePair
	closed bool
	wg     sync.WaitGroup
}

// gatePair is one proxied connection: the client's side and the server's.
type gatePair struct {
	client, server net.Conn
	shut, cut      bool // guarded by gate.mu
}

// startGate listens on a free loopback port and forwards to upstream.
func startGate(t *testing.T, upstream string) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln, upstream: upstream, held: make(chan struct{}, 1)}
	g.cond = sync.NewCond(&g.mu)
	g.wg.Add(1)
	go g.accept()
	return g
}

// gatedConfig is testConfig with the connections going through a new gate,
// which is closed at cleanup, before the pool's cleanup checks for leaked
// goroutines (so open the pool after this).
func gatedConfig(t *testing.T, mutate func(*Config)) (*Config, *gate) {
	t.Helper()
	cfg := testConfig(t, mutate)
	g := startGate(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	host, port, _ := net.SplitHostPort(g.ln.Addr().String())
	n, _ := strconv.Atoi(port)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(n)
	cfg.ConnConfig.Fallbacks = nil
	return cfg, g
}

func (g *gate) accept() {
	defer g.wg.Done()
	for {
		client, err := g.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", g.upstream)
		if err != nil {
			client.Close()
			continue
		}
		pair := &gatePair{client: client, server: server}
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		g.pairs = append(g.pairs, pair)
		g.mu.Unlock()
		g.wg.Add(2)
		go func() {
			defer g.wg.Done()
			_, _ = io.Copy(client, server)
			client.Close()
		}()
		go func() {
			defer g.wg.Done()
			g.forward(pair)
			server.Close()
		}()
	}
}

// forward copies what the client sends to the server, holding it while the
// pair is shut.
func (g *gate) forward(pair *gatePair) {
	buf := make([]byte, 32<<10)
	for {
		n, err := pair.client.Read(buf)
		if n > 0 {
			g.mu.Lock()
			if pair.shut {
				select {
				case g.held <- struct{}{}:
				default:
				}
			}
			for pair.shut && !pair.cut {
				g.cond.Wait()
			}
			cut := pair.cut
			g.mu.Unlock()
			if cut {
				return
			}
			if _, err := pair.server.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Shut holds what the connections open now send next.
func (g *gate) Shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pair := range g.pairs {
		pair.shut = true
	}
}

// Open lets everything held through, and what follows.
func (g *gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pair := range g.pairs {
		pair.shut = false
	}
	g.cond.Broadcast()
}

// Cut closes every proxied connection, both sides, as a network that
// failed would.
func (g *gate) Cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, pair := range g.pairs {
		pair.cut = true
		pair.client.Close()
		pair.server.Close()
	}
	g.pairs = nil
	g.cond.Broadcast()
}

// Close stops listening, cuts everything and waits for the gate's
// goroutines.
func (g *gate) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.ln.Close()
	g.Cut()
	g.wg.Wait()
}
