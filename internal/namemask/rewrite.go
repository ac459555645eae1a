package namemask

import "strings"

// rewriter builds a copy of a text with spans of it replaced, left to
// right: every pass of the masking edits a name this way.
type rewriter struct {
	s      string
	b      strings.Builder
	last   int  // where the text not copied yet starts
	edited bool // whether any span was replaced
}

// replace copies the text up to start as it is, then with in place of
// s[start:end]; spans come in order and do not overlap.
func (r *rewriter) replace(start, end int, with string) {
	r.b.WriteString(r.s[r.last:start])
	r.b.WriteString(with)
	r.last = end
	r.edited = true
}

// result returns the text as replaced, the rest after the last span as it
// is; it is called once, when the replacing is done.
func (r *rewriter) result() string {
	if !r.edited {
		return r.s
	}
	r.b.WriteString(r.s[r.last:])
	return r.b.String()
}
