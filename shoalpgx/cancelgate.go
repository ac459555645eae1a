package shoalpgx

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// cancelGate is the net.Conn under each connection the pool dials (its
// DialFunc wraps the socket, under TLS; gateConnConfig). Its Write waits
// while a cancel request for an earlier statement may still reach the
// server, so that it cannot cancel the statement being written, and
// refuses the next statement once one went unacknowledged; while nothing
// is pending that costs two atomic loads per write. It also tells the
// canceler whether a statement may be running at the server: one is from
// the client's first write until pgx reads the server's ReadyForQuery
// (gateReader, on the protocol's bytes above TLS). With a handler other
// than buildCanceler, c stays nil and the gate passes everything through.
type cancelGate struct {
	net.Conn
	timeout time.Duration // the pool's CancelTimeout, for buildCanceler
	c       *canceler     // set by buildCanceler during the connect

	// closing lets writes through whatever is pending: the connection is
	// being closed, and a late cancel cannot hurt a Terminate.
	closing atomic.Bool
	// readFailed is set while pgx's last read failed (a deadline, a
	// broken connection), after which pgx closes the connection, and
	// refused once the gate refused a write, after which pgx closes it
	// too: either way what pgx writes next is its Terminate, which an
	// unacknowledged cancel request cannot hurt.
	readFailed, refused atomic.Bool

	// busy is set by every write and cleared by a read whose last
	// message, asynchronous ones aside, is a ReadyForQuery (noteRead).
	busy atomic.Bool
	// next is where the server's next message starts, counted from the
	// start of pgx's next read; hdr counts the bytes of a message header
	// (a type byte, a length) that the last read cut short, the length's
	// in lenb. Only noteRead uses them, and pgx never reads from two
	// goroutines at once.
	next int
	hdr  int
	lenb [4]byte

	// waitHangUp is set for a pool whose closes wait for the server to end
	// the backend (closeAndWait), and terminated once pgx wrote its
	// Terminate (gateWriter): Close then waits for the server's hang-up
	// too, so that a connection pgx closes itself (a caller's Close of the
	// *pgx.Conn under an acquired Conn) frees its permit only once the
	// server has.
	waitHangUp bool
	terminated atomic.Bool

	// answered is set when the server sent something after pgx's last
	// read failed, which pgx follows by closing the connection: what its
	// cleanup reads then says the server is answering, not silent
	// (closeOrLeave). A later read of pgx's own clears it (gateReader).
	answered atomic.Bool
}

// Read reads from the socket, noting what comes after a failed read
// (answered).
func (g *cancelGate) Read(b []byte) (int, error) {
	n, err := g.Conn.Read(b)
	if n > 0 && g.readFailed.Load() {
		g.answered.Store(true)
	}
	return n, err
}

// Close closes the socket; after pgx's Terminate, on a pool whose closes
// wait for the server, it first reads until the server hangs up, which it
// does as the backend exits (closeTimeout at most; see closeAndWait).
func (g *cancelGate) Close() error {
	if g.waitHangUp && g.terminated.Load() {
		if g.Conn.SetDeadline(time.Now().Add(closeTimeout)) == nil {
			_, _ = io.Copy(io.Discard, g.Conn)
		}
	}
	return g.Conn.Close()
}

// Write writes b once no cancel request for an earlier statement is in
// flight.
func (g *cancelGate) Write(b []byte) (int, error) {
	g.busy.Store(true) // before cut is loaded: see HandleCancel
	c := g.c
	if c == nil || (!c.pending.Load() && !c.cut.Load()) || g.closing.Load() {
		return g.Conn.Write(b)
	}
	var r *cancelRound
	if c.cut.Load() {
		r = c.writeAfterCut()
	}
	if c.pending.Load() {
		c.wait()
		if c.unsafe.Load() && !g.readFailed.Load() && g.refused.CompareAndSwap(false, true) {
			// A statement on a connection pgx keeps: refuse it, and pgx
			// closes the connection. Its Terminate, after, goes through.
			return 0, errCancelUnacknowledged
		}
	}
	n, err := g.Conn.Write(b)
	if r != nil {
		go c.cancelUntilAnswered(r)
	}
	return n, err
}

// noteRead follows the server's messages through what pgx reads, by their
// headers alone, and clears busy when the last message the read starts is
// a ReadyForQuery, or an asynchronous message (a notification, a notice, a
// parameter's new value) that came after one: PostgreSQL sends a listening
// session's notifications right after its ReadyForQuery, often in the same
// read. A read costs a length per message it starts, nothing per byte; the
// types are looked at only in that last case.
func (g *cancelGate) noteRead(b []byte) {
	i := g.next
	if g.hdr > 0 {
		k := copy(g.lenb[g.hdr-1:], b)
		if g.hdr += k; g.hdr < 5 {
			return
		}
		g.hdr = 0
		i = k + msgLen(g.lenb[:]) - 4
	}
	first, last := i, -1
	for i+5 <= len(b) {
		last = i
		i += 1 + msgLen(b[i+1:i+5])
	}
	if i < len(b) { // a header the read cuts short
		last = i
		g.hdr = 1 + copy(g.lenb[:], b[i+1:])
		i = len(b)
	}
	g.next = i - len(b)
	if last < 0 {
		return
	}
	switch b[last] {
	case 'Z':
		g.busy.Store(false)
	case 'A', 'N', 'S':
		if readyBefore(b, first, last) {
			g.busy.Store(false)
		}
	}
}

// readyBefore reports whether, among the messages of b that start at first
// and before last, the last one other than an asynchronous message is a
// ReadyForQuery.
func readyBefore(b []byte, first, last int) bool {
	ready := false
	for i := first; i < last; i += 1 + msgLen(b[i+1:i+5]) {
		switch b[i] {
		case 'Z':
			ready = true
		case 'A', 'N', 'S':
		default:
			ready = false
		}
	}
	return ready
}

// msgLen is the length in a message's header, which counts its own four
// bytes: never less than that, so that bytes that are no header cannot
// stop the framing or send it back.
func msgLen(b []byte) int {
	return max(int(binary.BigEndian.Uint32(b)), 4)
}

// NetConn returns the connection under the gate.
func (g *cancelGate) NetConn() net.Conn { return g.Conn }

// SyscallConn returns the socket's, for the look at an idle connection
// (internal/peek).
func (g *cancelGate) SyscallConn() (syscall.RawConn, error) {
	sc, ok := g.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("shoalpgx: the connection has no file descriptor")
	}
	return sc.SyscallConn()
}

// gateReader is the reader pgx's protocol frontend reads the server's
// messages from: it shows them to the gate.
type gateReader struct {
	g *cancelGate
	r io.Reader
}

func (gr *gateReader) Read(b []byte) (int, error) {
	n, err := gr.r.Read(b)
	if n > 0 {
		gr.g.noteRead(b[:n])
	}
	gr.g.readFailed.Store(err != nil && n == 0)
	if n > 0 && gr.g.answered.Load() {
		gr.g.answered.Store(false) // pgx reads on: the connection lives
	}
	return n, err
}

// findGate returns the cancelGate under nc, looking through TLS and any
// wrapper that reveals what it wraps (NetConn), or nil.
func findGate(nc net.Conn) *cancelGate {
	for range 8 {
		if g, ok := nc.(*cancelGate); ok {
			return g
		}
		u, ok := nc.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		nc = u.NetConn()
	}
	return nil
}

// gateWriter is the writer pgx's protocol frontend writes to, above TLS,
// for a pool whose closes wait for the server: it tells the gate when pgx
// has written its Terminate, which pgx writes alone, just before it hangs
// up.
type gateWriter struct {
	g *cancelGate
	w io.Writer
}

func (gw *gateWriter) Write(b []byte) (int, error) {
	n, err := gw.w.Write(b)
	if n == len(b) && bytes.HasSuffix(b, terminate) {
		gw.g.terminated.Store(true)
	}
	return n, err
}

// gateConnConfig sets cc up for the pool's dials: each connection's socket
// goes under a cancelGate carrying the pool's CancelTimeout, and pgx's
// frontend reads through a gateReader (and writes through a gateWriter
// when waitHangUp). The ConnConfig's own DialFunc and BuildFrontend still
// do their work underneath.
func gateConnConfig(cc *pgx.ConnConfig, timeout time.Duration, waitHangUp bool) {
	dial, build := cc.DialFunc, cc.BuildFrontend
	if dial == nil || build == nil {
		return // pgconn cannot connect without them either
	}
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cancelGate{Conn: nc, timeout: timeout, waitHangUp: waitHangUp}, nil
	}
	cc.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		if nc, ok := w.(net.Conn); ok {
			if g := findGate(nc); g != nil {
				r = &gateReader{g: g, r: r}
				if waitHangUp {
					w = &gateWriter{g: g, w: w}
				}
			}
		}
		return build(r, w)
	}
}

// openGate lets writes through pc's gate, whatever is pending, for the
// Terminate of a connection being closed.
func (pc *pooledConn) openGate() {
	if g := findGate(pc.conn.PgConn().Conn()); g != nil {
		g.closing.Store(true)
	}
}
