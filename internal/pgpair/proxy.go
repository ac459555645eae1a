package pgpair

import (
	"fmt"
	"net"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a server until
// Silence; after that it still accepts connections but forwards nothing
// and closes nothing, in either direction, on old connections and new: a
// server whose machine crashed or went behind a partition, as its clients
// see it. Only Close ends its connections. While Refuse is on, it closes
// each new connection at once instead: a server that is down. Accepted
// counts the connections it took, so that a test sees whether a client
// tried the host at all.
type Proxy struct {
	ln       net.Listener
	upstream string

	mu       sync.Mutex
	silent   bool
	refusing bool
	closed   bool
	accepted int
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// NewProxy listens on a free port of 127.0.0.1 and forwards to upstream,
// which must be a loopback address.
func NewProxy(upstream string) (*Proxy, error) {
	host, _, err := net.SplitHostPort(upstream)
	if err != nil {
		return nil, fmt.Errorf("pgpair: proxy upstream %q: %v", upstream, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("pgpair: proxy upstream %q is not a loopback address", upstream)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("pgpair: proxy listen: %w", err)
	}
	p := &Proxy{ln: ln, upstream: upstream, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where clients dial, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Silence stops all forwarding for good: bytes from either side are read
// and dropped, closes are not passed on, and new connections are accepted
// and then left alone.
func (p *Proxy) Silence() {
	p.mu.Lock()
	p.silent = true
	p.mu.Unlock()
}

// Refuse turns refusing new connections on or off: while it is on, each
// one is closed as soon as it is accepted. Connections already forwarded
// go on.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refusing = on
	p.mu.Unlock()
}

// Accepted is how many connections the proxy has accepted, refused ones
// included.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *Proxy) isSilent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	err := p.ln.Close()
	for c := range conns {
		c.Close()
	}
	p.wg.Wait()
	return err
}

// admit counts a new connection and reports whether the proxy takes it: it
// is closed at once while refusing, and once the proxy is closed.
func (p *Proxy) admit(c net.Conn) bool {
	p.mu.Lock()
	p.accepted++
	refusing := p.refusing
	p.mu.Unlock()
	if refusing {
		c.Close()
		return false
	}
	return p.track(c)
}

// track remembers c for Close; false (and c closed) once closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.admit(client) {
			if p.isClosed() {
				return
			}
			continue
		}
		if p.isSilent() {
			p.wg.Add(1)
			go p.drain(client)
			continue
		}
		server, err := net.Dial("tcp", p.upstream)
		if err != nil {
			// The server refuses: so does the proxy.
			client.Close()
			continue
		}
		if !p.track(server) {
			return
		}
		p.wg.Add(2)
		go p.pipe(server, client)
		go p.pipe(client, server)
	}
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// drain reads and drops what c sends until Close closes it.
func (p *Proxy) drain(c net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 4<<10)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// pipe copies src to dst while the proxy forwards; once silent it drops
// what src sends and leaves dst open whatever happens to src.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		silent := p.isSilent()
		if n > 0 && !silent {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				if !p.isSilent() {
					src.Close()
				}
				return
			}
		}
		if err != nil {
			if !silent {
				dst.Close()
			}
			return
		}
	}
}
