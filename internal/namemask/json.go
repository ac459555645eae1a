package namemask

import (
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

// jsonSecretAt returns where the text starts and ends of the string that
// is the value of the password key starting at s[i], written as JSON
// writes a member ({"password":"pw"}, or `{\"password\":\"pw\"}` in text
// that is itself a JSON string): the key in quotes, a ':' (white space
// around it allowed), and the value in the same quotes. ok is false when
// no such member starts there; a value that is no string (a number,
// null) is none. The text runs to the quote that closes it (nextCloser).
// Its quotes stay, as around any quoted value with text after it, and
// only what is between them is the password. A string that never closes
// runs, its opening quote with it, to the end of s, as a quoted
// keyword/value value that never closes is masked bare: masked, it ends
// there, and text after it (a suffix) is no part of it.
func jsonSecretAt(s string, i int) (start, end int, ok bool) {
	q := openingQuote(s, i)
	if q == "" || q[len(q)-1] != '"' {
		return 0, 0, false
	}
	k := i
	for k < len(s) && isKeywordByte(s[k]) {
		k++
	}
	if k == i || !strings.HasPrefix(s[k:], q) || !connstr.IsSecretKey(s[i:k]) {
		return 0, 0, false
	}
	j := skipWordSpace(s, k+len(q))
	if j == len(s) || s[j] != ':' {
		return 0, 0, false
	}
	j = skipWordSpace(s, j+1)
	if !strings.HasPrefix(s[j:], q) {
		return 0, 0, false
	}
	if end = nextCloser(s, q, j+len(q), len(s)); end < 0 {
		return j, len(s), true
	}
	return j + len(q), end, true
}

// maskJSON masks the text of each password member's string written as
// JSON writes it (see jsonSecretAt). It runs before the other readings,
// which then find the string masked: read as keyword/value text, a JSON
// document has no password keyword, and a pair in its string
// ({"password":"a token=b"}) would take the closing quote in.
func (m masker) maskJSON(s string) string {
	r := rewriter{s: s}
	for i := 0; i < len(s); i++ {
		start, end, ok := jsonSecretAt(s, i)
		if !ok {
			continue
		}
		if end > start {
			r.replace(start, end, m.value(s, connstr.Span{Start: start, End: end}, false))
		}
		i = end
	}
	return r.result()
}

// skipWordSpace returns where the first byte at or after s[i] is that is
// no white space, or len(s).
func skipWordSpace(s string, i int) int {
	for i < len(s) && isWordSpace(s[i]) {
		i++
	}
	return i
}
