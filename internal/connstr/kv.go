package connstr

import "strings"

// isSpace is the white space libpq's keyword/value parser skips.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// skipSpace returns the index of the first non-space byte of s at or after
// i.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// readKeywordValue reads a keyword/value string as pgx does (values bare,
// with backslash escapes, or single-quoted) and returns the values of its
// password keywords. Where the string stops parsing, everything from the
// first password value (or from that point, if no password came before)
// to the end is a secret: the rest cannot be told apart.
func readKeywordValue(s string) Reading {
	var spans []Span
	broken := func(at int, problem string) Reading {
		if len(spans) > 0 {
			at = min(at, spans[0].Start)
		}
		return Reading{Secrets: merge(append(spans, Span{at, len(s)})), Problem: problem}
	}
	for i := skipSpace(s, 0); i < len(s); {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return broken(i, "is neither a URL nor keyword=value pairs")
		}
		key := strings.Trim(s[i:i+eq], " \t\n\r\v\f")
		if key == "" || strings.ContainsAny(key, " \t\n\r\v\f") {
			return broken(i, "has a keyword without '=' (quote values that hold spaces: password='...')")
		}
		v := skipSpace(s, i+eq+1)
		end, ok := ValueEnd(s, v)
		if !ok {
			if IsSecretKey(key) {
				spans = append(spans, Span{v, len(s)})
			}
			return broken(v, "has a quoted value without its closing quote")
		}
		if IsSecretKey(key) {
			spans = append(spans, Span{v, end})
		}
		i = skipSpace(s, end)
	}
	return Reading{Secrets: merge(spans)}
}

// ValueEnd returns where the keyword/value value that starts at s[v] ends,
// as pgx reads it: a bare value at the first space (a backslash escapes
// the byte after it), a single-quoted one after its closing quote. ok is
// false for a quoted value that never closes; end is then len(s).
func ValueEnd(s string, v int) (end int, ok bool) {
	end = v
	switch {
	case v >= len(s):
		return len(s), true
	case s[v] != '\'':
		for end < len(s) && !isSpace(s[end]) {
			if s[end] == '\\' {
				end++
			}
			end++
		}
		return min(end, len(s)), true
	}
	end = v + 1
	for end < len(s) && s[end] != '\'' {
		if s[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(s) {
		return len(s), false
	}
	return end + 1, true // past the closing quote
}
