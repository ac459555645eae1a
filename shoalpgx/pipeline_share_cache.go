package shoalpgx

import (
	"sync"
	"sync/atomic"
)

// shareCache remembers shareable's answer for the statements a pool has
// run, so that a statement run again costs a map lookup rather than a scan
// of its text for the session functions, which on a small statement costs
// as much as the rest of the pool's work. Readers load an immutable map;
// a new statement copies it. It stops learning past shareCacheStatements
// statements or shareCacheBytes of their text, so that a program that puts
// its values in the statement's text pays the scan, not memory.
type shareCache struct {
	known atomic.Pointer[map[string]bool]
	full  atomic.Bool // no more is learned: a miss takes no lock
	mu    sync.Mutex  // serialises the copies
	bytes int         // the text the map holds; guarded by mu
}

const (
	shareCacheStatements = 1024
	shareCacheBytes      = 1 << 20
)

// shareable is the package's shareable, remembered.
func (sc *shareCache) shareable(sql string) bool {
	if m := sc.known.Load(); m != nil {
		if ok, seen := (*m)[sql]; seen {
			return ok
		}
	}
	ok := shareable(sql)
	if !sc.full.Load() {
		sc.learn(sql, ok)
	}
	return ok
}

// learn adds sql's answer, while the cache has room.
func (sc *shareCache) learn(sql string, ok bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	old := sc.known.Load()
	n := 0
	if old != nil {
		n = len(*old)
		if _, seen := (*old)[sql]; seen {
			return
		}
	}
	if n >= shareCacheStatements || sc.bytes > shareCacheBytes/2 && sc.bytes+len(sql) > shareCacheBytes {
		sc.full.Store(true)
		return
	}
	if sc.bytes+len(sql) > shareCacheBytes {
		return // too long for the room left, which shorter ones may still take
	}
	m := make(map[string]bool, n+1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[sql] = ok
	sc.bytes += len(sql)
	sc.known.Store(&m)
}
