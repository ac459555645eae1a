package pgpair

import (
	"fmt"
	"net"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a server, and
// lets a test disturb them as a network or a server in trouble would:
//
//   - Hold keeps what either side sends waiting at the proxy until
//     Release, without closing anything: a stalled route. HoldOpen does
//     so on the connections open now only, so that new ones pass.
//     Held tells the test when bytes first wait.
//   - Silence drops what either side sends, for good, and passes no
//     close on, on old connections and new: a server whose machine
//     crashed or went behind a partition, as its clients see it.
//     SilenceOpen does so on the connections open now only.
//   - Cut closes the connections open now, both ends: a server that went
//     away. Refuse closes each new connection at once: a server that is
//     down.
//
// Accepted counts the connections it took, so that a test sees whether a
// client tried the host at all. Close ends every connection, and waits
// for the proxy's goroutines.
type Proxy struct {
	ln       net.Listener
	upstream string
	held     chan struct{} // gets a value when bytes first wait at a hold

	mu       sync.Mutex
	cond     *sync.Cond // broadcast when a hold is lifted or links close
	holdNew  bool       // new connections start held
	silent   bool       // new connections start silent, and are not forwarded
	refusing bool
	closed   bool
	accepted int
	links    map[*link]struct{}
	wg       sync.WaitGroup
}

// link is one proxied connection: the client's end and the server's (nil
// for a connection accepted while silent, which is never forwarded).
type link struct {
	client, server net.Conn
	holding        bool // guarded by Proxy.mu
	silent         bool // guarded by Proxy.mu
	cut            bool // guarded by Proxy.mu
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
	p := &Proxy{ln: ln, upstream: upstream, held: make(chan struct{}, 1), links: make(map[*link]struct{})}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where clients dial, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Hold keeps what either side of every connection sends waiting at the
// proxy, from now on and on connections accepted later, until Release.
func (p *Proxy) Hold() { p.hold(true) }

// HoldOpen keeps what either side of the connections open now sends
// waiting at the proxy until Release; connections accepted later pass.
func (p *Proxy) HoldOpen() { p.hold(false) }

func (p *Proxy) hold(andNew bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if andNew {
		p.holdNew = true
	}
	for l := range p.links {
		l.holding = true
	}
}

// Release forwards what was held, and all that follows.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdNew = false
	for l := range p.links {
		l.holding = false
	}
	p.cond.Broadcast()
}

// Held gets a value when bytes first wait at a hold (one, however many
// wait), so that a test knows a round trip is under way and stuck.
func (p *Proxy) Held() <-chan struct{} { return p.held }

// Silence stops all forwarding for good: bytes from either side are read
// and dropped, closes are not passed on, and new connections are accepted
// and then left alone.
func (p *Proxy) Silence() { p.silence(true) }

// SilenceOpen silences the connections open now, as Silence does, for
// good; connections accepted later are forwarded.
func (p *Proxy) SilenceOpen() { p.silence(false) }

func (p *Proxy) silence(andNew bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if andNew {
		p.silent = true
	}
	for l := range p.links {
		l.silent = true
	}
}

// Cut closes the connections open now, both ends, dropping what they
// held; new ones are treated as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	links := p.links
	p.links = make(map[*link]struct{})
	for l := range links {
		l.cut = true
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	for l := range links {
		l.close()
	}
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

// Close stops listening, closes every connection and waits for the
// proxy's goroutines to end. It may be called more than once.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	links := p.links
	p.links = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	err := p.ln.Close()
	for l := range links {
		l.close()
	}
	p.wg.Wait()
	return err
}

func (l *link) close() {
	l.client.Close()
	if l.server != nil {
		l.server.Close()
	}
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
	return true
}

// track remembers l for Cut and Close, with the state new connections
// start in; false (and l closed) once the proxy is closed.
func (p *Proxy) track(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		l.close()
		return false
	}
	l.holding, l.silent = p.holdNew, p.silent
	p.links[l] = struct{}{}
	return true
}

func (p *Proxy) isSilent() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.silent
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.admit(client) {
			continue
		}
		if p.isSilent() {
			l := &link{client: client}
			if !p.track(l) {
				return
			}
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
		l := &link{client: client, server: server}
		if !p.track(l) {
			return
		}
		p.wg.Add(2)
		go p.pipe(l, server, client)
		go p.pipe(l, client, server)
	}
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

// pipe copies src to dst, one of l's two directions: it waits before a
// write while l is held, drops what src sends once l is silent, and passes
// a close on, either way, unless l is silent.
func (p *Proxy) pipe(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			forward, silent := p.wait(l)
			if !forward {
				return
			}
			if !silent {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					if !p.silenced(l) {
						src.Close()
					}
					return
				}
			}
		}
		if err != nil {
			if !p.silenced(l) {
				dst.Close()
			}
			return
		}
	}
}

// wait returns once l is not held: forward is false if l was cut or the
// proxy closed meanwhile, and silent says whether to drop the bytes.
func (p *Proxy) wait(l *link) (forward, silent bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.holding && !l.silent {
		select {
		case p.held <- struct{}{}:
		default:
		}
	}
	for l.holding && !l.silent && !l.cut && !p.closed {
		p.cond.Wait()
	}
	return !l.cut && !p.closed, l.silent
}

func (p *Proxy) silenced(l *link) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return l.silent
}
