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
	for i := skipSpace(s, 0); i < len(s); {
		p, next, stop := readPair(s, i)
		switch stop {
		case noKeyword:
			kv.Stop, kv.Problem = i, "has a keyword without '=' (quote values that hold spaces: password='...')"
			if strings.IndexByte(s[i:], '=') < 0 {
				kv.Problem = "is neither a URL nor keyword=value pairs"
			}
			return kv
		case unclosed:
			kv.Pairs = append(kv.Pairs, p)
			kv.Stop, kv.Problem = p.Value.Start, "has a quoted value without its closing quote"
			return kv
		}
		kv.Pairs = append(kv.Pairs, p)
		i = next
	}
	return kv
}

// pairStop tells why a pair does not read as one.
type pairStop int

const (
	pairRead  pairStop = iota // it does
	noKeyword                 // no keyword, then '=', starts it
	unclosed                  // its value is quoted and never closes
)

// readPair reads the pair that starts at s[i], a byte that is no white
// space, and returns it and where the next one starts. Its keyword runs
// to the '=' or the white space before it, so that reading a pair costs
// what the pair is long: a keyword with white space in it, or none, is
// noKeyword, whatever comes later.
func readPair(s string, i int) (p Pair, next int, stop pairStop) {
	k := i
	for k < len(s) && s[k] != '=' && !isSpace(s[k]) {
		k++
	}
	eq := skipSpace(s, k)
	if k == i || eq == len(s) || s[eq] != '=' {
		return Pair{}, i, noKeyword
	}
	v := skipSpace(s, eq+1)
	end, ok := ValueEnd(s, v)
	p = Pair{Key: s[i:k], Value: Span{v, end}}
	if !ok {
		return p, len(s), unclosed
	}
	return p, skipSpace(s, end), pairRead
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
