package namemask

import "strings"

// closedStringEnd returns where the value of the keyword sc found last,
// which starts at s[v] and which the readings before end at end, ends when
// that keyword follows an opening quote and white space ends the value
// with no keyword=value pair after it (`"password=a b"`): before the
// quote that closes the string, as closedValueEnd ends a value that runs
// to it, if one does on its line (see closedWordEnd). Split at the
// space, the rest of the password would show; and masked as a bare
// word, any value there would read on to that quote when masked again.
// A single quote that may close a value pgx reads quoted (see
// closesQuotedValue) opens no string: pgx reads the keyword after it as a
// pair's, and masked to the next quote, the value would read on past it
// ("a=' 'password=xxxxx'"). Otherwise end.
func (sc *valueScan) closedStringEnd(end int) int {
	s := sc.name
	if end == sc.v || end == len(s) || !isWordSpace(s[end]) || pairAt(s, end) {
		return end
	}
	q := openingQuote(s, sc.key)
	if q == "" || q == "'" && closesQuotedValue(s, sc.key-1) {
		return end
	}
	if closed := sc.closers.after(s, q, end); closed >= 0 {
		return lastCloser(s, q, sc.v, closed)
	}
	return end
}

// closedWordEnd returns where the word ends whose quote, the first in
// s[from:] before the end of its line, closes a string q opened with only
// punctuation that closes a quotation after it in its word: a query's
// `"password=a b",`. A quote with other text after it (`a"b c"`) opens
// no word of its own and is part of the value. -1 if none does; stop is
// where the search ended, at that quote or at the line's end. from is
// white space, so the backslashes before each quote are counted alike
// from wherever before it the search starts. A string in a message
// closes on its line: one that does not, unless the password runs on
// to a later line, is not the string around it.
func closedWordEnd(s, q string, from int) (end, stop int) {
	run := 0         // backslashes right before s[c]
	punctEnd := from // where the punctuation after the last quote seen ends
	c := from
	for ; c < len(s) && s[c] != '\n'; c++ {
		if closes(q, s[c], run) {
			if punctEnd <= c {
				punctEnd = c + 1
				for punctEnd < len(s) && strings.IndexByte(closingPunct, s[punctEnd]) >= 0 {
					punctEnd++
				}
			}
			// A backslash before the white space escapes it, and the
			// word goes on.
			if (punctEnd == len(s) || isWordSpace(s[punctEnd])) && s[punctEnd-1] != '\\' {
				return punctEnd, c
			}
		}
		if s[c] == '\\' {
			run++
		} else {
			run = 0
		}
	}
	return -1, c
}

// quoteClosers remembers, for each opening quote, what closedWordEnd
// answered a pass last. A pass asks from white space further on each
// time, and until it asks from past where that search stopped, the
// answer is the same: a pass of many values reads each line once per
// quote, not again from each value.
type quoteClosers map[string]closedAnswer

// closedAnswer is what closedWordEnd(s, q, from) answered.
type closedAnswer struct{ from, end, stop int }

// after returns closedWordEnd(s, q, from)'s end, from white space at or
// after where the pass asked last.
func (c *quoteClosers) after(s, q string, from int) int {
	if a, ok := (*c)[q]; ok && a.from <= from && from <= a.stop {
		return a.end
	}
	if *c == nil {
		*c = quoteClosers{}
	}
	end, stop := closedWordEnd(s, q, from)
	(*c)[q] = closedAnswer{from: from, end: end, stop: stop}
	return end
}

// closesQuotedValue reports whether the single quote s[i] may close a
// value pgx reads quoted: the single quote before it that no backslash
// escapes follows an '=', white space between them allowed. Inside such
// a value every quote is escaped, so that one opens it. A pass asks
// about quotes further on each time, and reads back to the quote before
// each: each byte about once.
func closesQuotedValue(s string, i int) bool {
	for k := i - 1; k >= 0; k-- {
		if s[k] != '\'' {
			continue
		}
		b := k // where the backslashes before the quote start
		for b > 0 && s[b-1] == '\\' {
			b--
		}
		if (k-b)%2 == 1 {
			continue
		}
		for b > 0 && isWordSpace(s[b-1]) {
			b--
		}
		return b > 0 && s[b-1] == '='
	}
	return false
}
