package namemask

import "github.com/shoalpool/shoal/internal/connstr"

// valueScan walks the password keywords of a name left to right, for the
// passes that mask their values: each says where to read on from.
type valueScan struct {
	name string
	at   int // where the next keyword may start
	// key, v and end are where the keyword found last starts, where
	// its value starts and where pgx ends that.
	key, v, end int
	words       urlWords
	closing     closingQuotes
	closers     quoteClosers
	// escaped tells that a keyword may be %-escaped: in the later
	// words of a name read whole as a URL (see secretValueAt).
	escaped bool
}

// next finds the next password keyword from at on (see secretValueAt),
// and reports whether there is one. at is then the byte after the
// keyword's start, unless the caller moves it on past the value.
func (s *valueScan) next() bool {
	for ; s.at < len(s.name); s.at++ {
		if v := secretValueAt(s.name, s.at, &s.words, s.escaped); v >= 0 {
			s.key, s.v = s.at, v
			s.end, _ = connstr.ValueEnd(s.name, v)
			s.at++
			return true
		}
	}
	return false
}
