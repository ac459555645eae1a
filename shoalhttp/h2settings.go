package shoalhttp

// HTTP/2 frame layout (RFC 9113, section 4.1) and the one setting watched.
const (
	frameHeaderLen    = 9
	frameTypeSettings = 0x4
	frameFlagAck      = 0x1
	settingLen        = 6
	settingMaxStreams = 0x3
)

// settingsWatch follows the SETTINGS_MAX_CONCURRENT_STREAMS a server sends
// on an HTTP/2 connection, by reading the frame headers of every byte x/net
// reads from it, in order. x/net tells a new limit only through State,
// which takes the connection's write lock; this tells it as the frame
// arrives, at the cost of a few comparisons per frame, so that the pool
// stops handing out streams the server will not give at once (with
// StrictMaxConcurrentStreams a request would wait for one inside x/net,
// holding the connection's header lock, until its context ended).
//
// Only x/net's read loop reads, so scan is never called concurrently.
type settingsWatch struct {
	hdr      [frameHeaderLen]byte
	hdrN     int // bytes of hdr read so far; a header is being read while left is 0
	left     int // payload bytes of the current frame not yet read
	settings bool
	ent      [settingLen]byte
	entN     int
	onLimit  func(uint32) // called with each MAX_CONCURRENT_STREAMS, in order
}

// scan reads p, the next bytes from the server.
func (w *settingsWatch) scan(p []byte) {
	for len(p) > 0 {
		if w.left == 0 {
			k := copy(w.hdr[w.hdrN:], p)
			w.hdrN += k
			p = p[k:]
			if w.hdrN < frameHeaderLen {
				return
			}
			w.hdrN = 0
			w.left = int(w.hdr[0])<<16 | int(w.hdr[1])<<8 | int(w.hdr[2])
			w.settings = w.hdr[3] == frameTypeSettings && w.hdr[4]&frameFlagAck == 0
			w.entN = 0
			continue
		}
		k := min(w.left, len(p))
		if w.settings {
			w.entries(p[:k])
		}
		w.left -= k
		p = p[k:]
	}
}

// entries reads part of a SETTINGS frame's payload: six-byte entries, a
// 16-bit identifier and a 32-bit value.
func (w *settingsWatch) entries(p []byte) {
	for len(p) > 0 {
		k := copy(w.ent[w.entN:], p)
		w.entN += k
		p = p[k:]
		if w.entN < settingLen {
			return
		}
		w.entN = 0
		if id := uint16(w.ent[0])<<8 | uint16(w.ent[1]); id == settingMaxStreams {
			w.onLimit(uint32(w.ent[2])<<24 | uint32(w.ent[3])<<16 | uint32(w.ent[4])<<8 | uint32(w.ent[5]))
		}
	}
}
