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

// Pair is one keyword=value pair of a keyword/value string, by where it
// stands in the string.
type Pair struct {
	// Key is the keyword, without the white space around it.
	Key string
	// Value is where the value is written, its quotes and backslashes
	// included; empty for an empty value.
	Value Span
}

// KeywordValue is a keyword/value string read as pairs.
type KeywordValue struct {
	// Pairs are the pairs read, in order. A quoted value that never
	// closes is the last, running to the end of the string.
	Pairs []Pair
	// Problem, when not empty, says why the string does not read as pairs
	// (it never quotes the string).
	Problem string
	// Stop is where reading stopped when there is a Problem: what follows
	// cannot be told apart.
	Stop int
}

// ReadKeywordValue reads s as keyword=value pairs the way pgx does: white
// space (ASCII's six) around the keyword, around '=' and between pairs,
// a keyword with no white space in it, and a value bare (a backslash
// escapes the byte after it), single-quoted, or empty. What masks such a
// string and what edits it both read it here, so that the two agree. A
// URL is not told apart here; Read does that.
func ReadKeywordValue(s string) KeywordValue {
	var kv KeywordValue
	stop := func(at int, problem string) KeywordValue {
		kv.Stop, kv.Problem = at, problem
		return kv
	}
	for i := skipSpace(s, 0); i < len(s); {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return stop(i, "is neither a URL nor keyword=value pairs")
		}
		key := strings.Trim(s[i:i+eq], " \t\n\r\v\f")
		if key == "" || strings.ContainsAny(key, " \t\n\r\v\f") {
			return stop(i, "has a keyword without '=' (quote values that hold spaces: password='...')")
		}
		v := skipSpace(s, i+eq+1)
		end, ok := ValueEnd(s, v)
		kv.Pairs = append(kv.Pairs, Pair{Key: key, Value: Span{v, end}})
		if !ok {
			return stop(v, "has a quoted value without its closing quote")
		}
		i = skipSpace(s, end)
	}
	return kv
}

// keywordValueSecrets returns the values of a keyword/value string's
// password keywords. Where the string stops reading as pairs, everything
// from the first password value (or from that point, if no password came
// before) to the end is a secret: the rest cannot be told apart.
func keywordValueSecrets(s string) Reading {
	kv := ReadKeywordValue(s)
	var spans []Span
	for _, p := range kv.Pairs {
		if IsSecretKey(p.Key) {
			spans = append(spans, p.Value)
		}
	}
	if kv.Problem == "" {
		return Reading{Secrets: merge(spans)}
	}
	at := kv.Stop
	if len(spans) > 0 {
		at = min(at, spans[0].Start)
	}
	return Reading{Secrets: merge(append(spans, Span{at, len(s)})), Problem: kv.Problem}
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
