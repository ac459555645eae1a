package shoalgrpc

import (
	"math"
	"net"
	"sync/atomic"
)

// HTTP/2 framing (RFC 9113, section 4.1 and 6.5) as far as reading the
// server's first SETTINGS frame needs it.
const (
	frameHeaderLen            = 9
	frameTypeSettings         = 0x4
	flagSettingsAck           = 0x1
	settingLen                = 6
	settingMaxConcurrentStrms = 0x3
	// maxSettingsPayload bounds what is buffered. A real server preface is
	// a few dozen bytes; a TLS record misread as a frame header claims over
	// a megabyte (its first byte, 0x15 or 0x16, is the length's top byte),
	// so it is rejected here and the connection is left alone.
	maxSettingsPayload = 16 * settingLen
	// maxAdvertised stands for "the server set no limit".
	maxAdvertised = math.MaxInt32
)

// settingsConn passes every byte through untouched and, on the way, reads
// the server preface (the first frame a server sends, which must be
// SETTINGS) to learn SETTINGS_MAX_CONCURRENT_STREAMS. grpc-go keeps that
// value inside its transport and exposes it nowhere.
//
// Only the transport's reader goroutine calls Read, so the parsing state
// needs no lock; the result is published through limit. Once the first
// frame is parsed (or found not to be SETTINGS) Read is a plain pass-through.
// Later SETTINGS frames that change the limit are not seen.
type settingsConn struct {
	net.Conn
	limit *atomic.Int32
	done  bool
	head  []byte // the first frame so far
}

// Read reads from the connection and watches the first frame go by.
func (s *settingsConn) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if !s.done && n > 0 {
		s.observe(b[:n])
	}
	return n, err
}

// observe adds bytes read to the first frame and parses it once complete.
func (s *settingsConn) observe(b []byte) {
	s.head = append(s.head, b...)
	if len(s.head) < frameHeaderLen {
		return
	}
	length := int(s.head[0])<<16 | int(s.head[1])<<8 | int(s.head[2])
	typ, flags := s.head[3], s.head[4]
	stream := (uint32(s.head[5])<<24 | uint32(s.head[6])<<16 | uint32(s.head[7])<<8 | uint32(s.head[8])) & (1<<31 - 1)
	if typ != frameTypeSettings || flags&flagSettingsAck != 0 || stream != 0 ||
		length%settingLen != 0 || length > maxSettingsPayload {
		s.finish() // not an HTTP/2 server preface we can read
		return
	}
	if len(s.head) < frameHeaderLen+length {
		return
	}
	limit := int64(maxAdvertised)
	payload := s.head[frameHeaderLen : frameHeaderLen+length]
	for i := 0; i+settingLen <= len(payload); i += settingLen {
		id := uint16(payload[i])<<8 | uint16(payload[i+1])
		if id != settingMaxConcurrentStrms {
			continue
		}
		v := int64(payload[i+2])<<24 | int64(payload[i+3])<<16 | int64(payload[i+4])<<8 | int64(payload[i+5])
		limit = max(1, min(v, maxAdvertised))
	}
	s.limit.Store(int32(limit))
	s.finish()
}

func (s *settingsConn) finish() {
	s.done = true
	s.head = nil
}
