package namemask

import "strings"

// openingQuote returns the quote that opens a string right before s[i]:
// a double or a single quote, with the backslashes before it when they
// escape it, as in text that is itself quoted as a JSON string (`\"`);
// or "" when no quote stands there. Backslashes that escape one another
// (`\\"`) are text of their own, and the quote after them opens the
// string alone.
func openingQuote(s string, i int) string {
	if i == 0 || s[i-1] != '"' && s[i-1] != '\'' {
		return ""
	}
	k := i - 1
	for k > 0 && s[k-1] == '\\' {
		k--
	}
	if (i-1-k)%2 == 0 {
		return s[i-1 : i]
	}
	return s[k:i]
}

// closes reports whether the quote c, after run backslashes, closes a
// string that q opened (see openingQuote). Each level of quoting doubles
// the backslashes before a quote and adds one: a quote escaped inside
// the string has more before it than q has, or as many as another
// level's.
func closes(q string, c byte, run int) bool {
	return c == q[len(q)-1] && run%(2*len(q)) == len(q)-1
}

// nextCloser returns where the first quote in s[from:to] that closes a
// string q opened starts, its backslashes included (see closes), or -1
// if none does.
func nextCloser(s, q string, from, to int) int {
	run := 0 // backslashes right before s[c]
	for c := from; c < to; c++ {
		if closes(q, s[c], run) {
			return c - (len(q) - 1)
		}
		if s[c] == '\\' {
			run++
		} else {
			run = 0
		}
	}
	return -1
}

// closedValueEnd returns where the bare value s[v:end], of the keyword
// that starts at s[i], ends when that keyword follows an opening quote
// (`"password=pw",`) and the value ends in the quote that closes it,
// with only punctuation that closes a quotation after it: right before
// that quote, the last such one, so that a quote in the password stays
// in the mask. The text after the value is the text around it: a query's
// closing quote, the comma after a JSON string. Otherwise end.
func closedValueEnd(s string, i, v, end int) int {
	q := openingQuote(s, i)
	if q == "" || v == end || s[v] == '\'' || s[v] == '"' {
		return end
	}
	return lastCloser(s, q, v, end)
}

// lastCloser returns where the last quote starts that closes a string q
// opened (see closes) in the punctuation that ends s[v:end], after s[v];
// or end if none does.
func lastCloser(s, q string, v, end int) int {
	p := end // where the punctuation at the value's end starts
	for p > v && strings.IndexByte(closingPunct, s[p-1]) >= 0 {
		p--
	}
	cut := end
	for c := nextCloser(s, q, p, end); c >= 0; c = nextCloser(s, q, c+len(q), end) {
		if c > v {
			cut = c
		}
	}
	return cut
}
