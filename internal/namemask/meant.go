package namemask

import "github.com/shoalpool/shoal/internal/connstr"

// maskMeant masks each password value whose writer quoted it in a way pgx
// does not read, where the writer's reading runs past pgx's (meantEnd):
// masked by pgx's reading alone, the rest of the password would show. It
// runs before the other readings, which then find the value masked; a
// value whose readings agree is left to them. A value with text right
// after it is masked as a quoted word (quotedBeforeText).
func (m masker) maskMeant(name string) string {
	r := rewriter{s: name}
	for sc := (valueScan{name: name}); sc.next(); {
		meant := sc.meantEnd(sc.end)
		if meant == sc.end {
			// On from its end: a keyword inside the value is part of
			// the password, which the later readings mask whole.
			sc.at = max(sc.at, sc.end)
			continue
		}
		r.replace(sc.v, meant, m.value(name, connstr.Span{Start: sc.v, End: meant}, true))
		sc.at = meant
	}
	return r.result()
}

// meantEnd returns where the value of the keyword sc found last, which
// starts at s[v] and which pgx ends at end, ends as its writer meant it,
// if that is later:
//
//   - a single-quoted value whose closing quote has another right after
//     it was written with two quotes in a row for one quote, as SQL
//     writes it: it runs to the quote that closes it so read, or to the
//     end of s if none does, as a quoted value that never closes does;
//   - a value that starts with a double quote was written in double
//     quotes, which pgx reads as part of a bare value: it runs to the
//     double quote that closes it (closingDoubleQuote), if one does, or
//     else on past the first double quote after it, as a shell reads a
//     word, its quoted parts joined ("p w"x, "a b"'c d': quotedWordEnd),
//     unless a keyword=value pair follows pgx's value. The string then
//     reads on as pgx reads it ("password="pw dbname=x"), and its
//     password is pgx's: masked further, the pairs after it would go.
//     Text past pgx's value that is no pair ("password="dq secret"",
//     `pass="a b"'c d'`, which pgx refuses) has no reading but the
//     writer's.
func (sc *valueScan) meantEnd(end int) int {
	s, v := sc.name, sc.v
	switch {
	case v >= len(s):
	case s[v] == '\'' && end < len(s) && s[end] == '\'':
		return doubledEnd(s, end+1)
	case s[v] == '"' && !pairAt(s, end):
		if c := sc.closing.after(s, v); c >= 0 {
			return max(end, c)
		}
		return max(end, quotedWordEnd(s, v))
	}
	return end
}

// quotedWordEnd returns where the value that starts with the double quote
// s[v] ends read as a shell reads a word, when no quote closes it where a
// word ends (closingDoubleQuote): its quoted parts, in double or single
// quotes, and the text between them joined into one word ("p w"x,
// "a b"'c d'), up to white space that no part holds or to a byte right
// after a part that goes on no word (see goesOnWord). A backslash
// escapes the byte after it, in a part or not, as pgx reads a value. A
// part after the first that never closes runs to the end of s, as a
// quoted value that never closes does; -1 if the first never closes. A
// value so read is masked and passed over, or ends where pgx's does, so
// that a pass reads each byte about once.
func quotedWordEnd(s string, v int) int {
	end := partEnd(s, v)
	for end >= 0 && end < len(s) {
		switch c := s[end]; {
		case c == '"' || c == '\'':
			if end = partEnd(s, end); end < 0 {
				return len(s)
			}
			if end < len(s) && !goesOnWord(s[end]) {
				return end
			}
		case c == '\\':
			end = min(end+2, len(s))
		case isWordSpace(c):
			return end
		default:
			end++
		}
	}
	return end
}

// partEnd returns where the quoted part that starts with the quote s[i]
// ends, past the same quote closing it, or -1 if none does. A backslash
// escapes the byte after it.
func partEnd(s string, i int) int {
	for k := i + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
		case s[i]:
			return k + 1
		}
	}
	return -1
}

// goesOnWord reports whether c, right after a quoted part, goes on the
// word the part is in: a letter, a digit or an underscore, a quote that
// opens another part, or a backslash. Any other byte (a parenthesis, a
// comma, a '/') is text after the word, as after a quoted value.
func goesOnWord(c byte) bool {
	return isKeywordByte(c) || c == '"' || c == '\'' || c == '\\'
}

// doubledEnd returns where a single-quoted value read with doubled quotes
// ends, from s[i], inside the quotes: after the first quote that is not
// doubled (a backslash escapes the byte after it, as in pgx), or at the
// end of s.
func doubledEnd(s string, i int) int {
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] != '\'':
		case i+1 < len(s) && s[i+1] == '\'':
			i++ // a doubled quote: one quote of the value
		default:
			return i + 1
		}
	}
	return len(s)
}

// closingQuotes remembers what closingDoubleQuote answered a pass last.
// The values after that one, in order, that start with a double quote
// start inside the text it read, and read from there it would answer the
// same (a value starts after '=' or white space, no backslash, so never
// inside an escape): a pass of many such values reads the text once, not
// again from each.
type closingQuotes struct {
	from, at int  // closingDoubleQuote(s, from) == at
	asked    bool // whether from and at hold an answer
}

// after returns closingDoubleQuote(s, v+1) for the value that starts
// with the double quote s[v].
func (c *closingQuotes) after(s string, v int) int {
	if c.asked && c.from <= v && (c.at < 0 || v+1 < c.at) {
		return c.at
	}
	c.from, c.at, c.asked = v+1, closingDoubleQuote(s, v+1), true
	return c.at
}

// closingDoubleQuote returns where a double-quoted value whose text starts
// at s[i] ends, past its closing quote, or -1 if none closes it. A quote
// closes it where a word ends: when no letter, digit or underscore comes
// after it, which would make it a quote that opens the next word. Nor a
// single quote: masked with text after it, the value is a single-quoted
// word, and a quote right after that would read as a doubled one. Nor a
// backslash, which escapes the byte after it into the word, as it does
// in a bare value (`"a b"\'c`).
func closingDoubleQuote(s string, i int) int {
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case s[i] == '"' && (i+1 == len(s) || !isKeywordByte(s[i+1]) && s[i+1] != '\'' && s[i+1] != '\\'):
			return i + 1
		}
	}
	return -1
}

// pairAt reports whether a keyword=value pair starts at s[i], after any
// white space: a keyword (see isKeywordByte), then '=', white space
// around it allowed.
func pairAt(s string, i int) bool {
	for i < len(s) && isWordSpace(s[i]) {
		i++
	}
	k := i
	for k < len(s) && isKeywordByte(s[k]) {
		k++
	}
	for k > i && k < len(s) && isWordSpace(s[k]) {
		k++
	}
	return k > i && k < len(s) && s[k] == '='
}
