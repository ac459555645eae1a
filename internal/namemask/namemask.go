// Package namemask masks the passwords in a pool's name, for everything
// that shows the name: the core masks Config.Name once, as it settles it,
// and the adapters the names they build; the live page (shoaldebug) and
// Stats.String mask what they are given too. Text masks free text the same
// way, with a word of the caller's: the command's output and errors.
package namemask

import (
	"net/url"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

// maskedWord replaces a password in a pool's name.
const maskedWord = "xxxxx"

// names masks pool names.
var names = masker{word: maskedWord}

// Mask masks the passwords in a pool's name, which should hold none: the
// live page is read by whoever reaches it, and Stats.String goes to logs,
// so a name written carelessly (a connection string, or "orders via
// postgres://u:pw@db") must not show one. First, the string of a
// password member written as JSON writes it ({"password":"pw"}) is masked
// between its quotes (maskJSON), and a password quoted in a way pgx does
// not read, as its writer meant it, up to where that reading ends it
// (maskMeant). Then a name that is a whole connection string, or starts
// with a URL, is masked where its passwords are, and in keyword/value
// form each URL word too, as below;
// otherwise a keyword/value string that ends it is read whole (maskTail),
// then each word holding "://" is read as a URL from its scheme on, and
// each word that is a keyword=value pair as one.
// Last, every password keyword at the start of a name or after any
// separator ("orders,password=pw", "orders password='a b' replica") has
// its value masked (maskKeywordValues). A quoted value with text right
// after it keeps its quotes ("(password='xxxxx')"). Plain names come back
// unchanged, and a masked name masked again too. A URL needs its scheme:
// "app:pw@db/x" is left as it is, since no reading tells it from a name
// such as "orders:7@eu", and pgx reads no URL without one either.
func Mask(name string) string {
	name = names.maskMeant(names.maskJSON(name))
	r := connstr.Read(name)
	switch {
	case r.URL:
		// A name that starts with a URL is read whole as one even when
		// it is in doubt (an '@' after its host), its secrets then
		// covering every place a password could be. Read word by word,
		// a name in doubt would lose its doubt once masked, and the
		// masked name, read whole, would mask more when masked again.
		return names.maskKeywordValues(names.mask(name, r.Secrets, false), true)
	case r.Problem == "":
		// A keyword/value reading masks its password keywords only: a
		// URL among its values ("url=postgres://u:pw@db") is a word of
		// its own to read.
		masked := names.maskWords(names.mask(name, r.Secrets, true))
		return names.maskKeywordValues(masked, false)
	}
	return names.maskKeywordValues(names.maskWords(maskTail(name)), false)
}

// masker masks passwords where they stand with word. With keepMasked, a
// value that is already word, with only punctuation that closes a
// quotation after it, is left as it is (see Text).
type masker struct {
	word       string
	keepMasked bool
}

// value returns what replaces the secret s[sp.Start:sp.End], a
// keyword/value value if kv is set (else a URL's).
func (m masker) value(s string, sp connstr.Span, kv bool) string {
	v := s[sp.Start:sp.End]
	if rest, ok := strings.CutPrefix(v, m.word); m.keepMasked && ok && strings.Trim(rest, closingPunct) == "" {
		return v
	}
	if kv && quotedBeforeText(s, sp) {
		return "'" + m.word + "'"
	}
	return m.word
}

// quotedBeforeText reports whether the keyword/value value s[sp.Start:
// sp.End] is quoted (in single quotes, or in double quotes as its writer
// meant them, or in quoted parts joined as a shell joins them: see
// meantEnd) and has text right after its closing quote, as in
// "(password='pw')". Masked bare, the word would take that text in when
// read again, since a bare value runs to the next space: masked twice,
// such a name would lose it ("(password=xxxxx"), and a name built from a
// masked one its suffix. Quoted, the word ends where the value did;
// but not before a single quote, which would read as a quote of the
// word's, doubled.
func quotedBeforeText(s string, sp connstr.Span) bool {
	return sp.End-sp.Start >= 2 && isQuote(s[sp.Start]) && isQuote(s[sp.End-1]) &&
		sp.End < len(s) && !isWordSpace(s[sp.End]) && s[sp.End] != '\''
}

// isQuote reports whether c is a single or a double quote.
func isQuote(c byte) bool { return c == '\'' || c == '"' }

// mask returns s with each of its secrets replaced; kv tells a
// keyword/value string's secrets from a URL's.
func (m masker) mask(s string, secrets []connstr.Span, kv bool) string {
	r := rewriter{s: s}
	for _, sp := range secrets {
		r.replace(sp.Start, sp.End, m.value(s, sp, kv))
	}
	return r.result()
}

// maskKeywordValues masks the value of each password keyword that starts
// the name or follows a separator. After a separator other than a space,
// as in "orders,password=pw", keyword/value text reads the key as
// "orders,password", no password keyword; after a space, a value quoted
// with a space in it or written "password = pw" is split by the word by
// word reading, and the whole name, with words that are no pairs after it
// ("orders password='a b' replica"), reads as no connection string. So
// the readings above leave such a value as it is. The value ends where
// pgx would end it (a bare one at the next space, a quoted one after its
// quote): a separator after it may be part of the password, and showing
// a little more masked beats showing a piece of it; but a bare value
// whose keyword follows an opening quote ends before the quote that
// closes it (closedValueEnd), past a space in it too (closedStringEnd). Inside a URL (after a "://" in the same
// word) the URL's own reading, in maskWord, has masked what is secret.
// In a name read whole as a URL (inQuery), a value ends at an '&' too;
// see paramEnd.
func (m masker) maskKeywordValues(name string, inQuery bool) string {
	r := rewriter{s: name}
	var params paramStarts
	for sc := (valueScan{name: name, escaped: inQuery}); sc.next(); {
		v, end := sc.v, sc.end
		if inQuery {
			end = paramEnd(params.before(name, r.last, v), name, v, end)
		}
		end = closedValueEnd(name, sc.key, v, end)
		// As its writer meant it, as maskMeant reads it: the readings
		// before may have left a value that reads so only now.
		end = sc.meantEnd(end)
		end = sc.closedStringEnd(end)
		if end == v {
			continue // nothing to mask: "password=" at the end
		}
		r.replace(v, end, m.value(name, connstr.Span{Start: v, End: end}, true))
		// On from the byte after the value: a keyword right after a
		// quoted value's closing quote starts a pair of its own.
		sc.at = end
	}
	return r.result()
}

// secretValueAt returns where the value starts of the password keyword
// that starts at name[i], or -1 when none starts there: a keyword at the
// start of the name or after a byte no keyword holds, then '=' (white
// space around it allowed), and not inside a URL (see maskKeywordValues),
// as words tells. With escaped, in the later words of a name read whole
// as a URL, the keyword may be %-escaped too ("%70assword=pw"), as a
// query's parameter names are read: a keyword/value string's are not.
func secretValueAt(name string, i int, words *urlWords, escaped bool) int {
	v := keywordValueAt(name, i, false)
	if v < 0 && escaped {
		v = keywordValueAt(name, i, true)
	}
	if v < 0 || words.in(name, i) {
		return -1
	}
	return v
}

// keywordValueAt returns where the value starts of the password keyword,
// %-escaped if escaped, that starts at name[i], or -1 when none does (see
// secretValueAt).
func keywordValueAt(name string, i int, escaped bool) int {
	if i > 0 && isKeyByte(name[i-1], escaped) || !isKeyByte(name[i], escaped) {
		return -1
	}
	k := i
	for k < len(name) && isKeyByte(name[k], escaped) {
		k++
	}
	eq := k
	for eq < len(name) && isWordSpace(name[eq]) {
		eq++
	}
	if eq == len(name) || name[eq] != '=' || !isSecretKey(name[i:k]) {
		return -1
	}
	v := eq + 1
	for v < len(name) && isWordSpace(name[v]) {
		v++
	}
	return v
}

// paramEnd returns where the value name[v:end] ends in a name read whole
// as a URL, whose words after the first are part of its path or query
// ("postgres://db/x?a=1 password=pw&b=2"): at its first '&', where the
// URL's own reading ends it. Masked past it, the value would take in the
// parameters after it, and the URL would read differently masked again.
// Only a bare value after a parameter's start (inParams: a '?' or, in a
// URL in doubt, an '&' before it in the name as masked) ends there: an
// '&' quoted, escaped or in the path ends no parameter, and cut there a
// password would show its rest.
func paramEnd(inParams bool, name string, v, end int) int {
	if v == end || name[v] == '\'' || !inParams {
		return end
	}
	for i := v; i < end; i++ {
		switch name[i] {
		case '\\':
			i++ // the byte it escapes
		case '&':
			return i
		}
	}
	return end
}

// paramStarts tells whether a '?' or an '&' stands before a value in a
// name as masked so far, reading each byte of the name once. A password
// masked before the value is no longer there: an '&' in it starts no
// parameter, and masked again the name would not hold it.
type paramStarts struct {
	read int  // where the name is read to
	seen bool // whether a '?' or '&' stands before read
}

// before reports whether one stands in name before v, where the text up
// to from is masked (the masked word holds neither).
func (p *paramStarts) before(name string, from, v int) bool {
	if at := max(from, p.read); !p.seen && at < v {
		p.seen = strings.ContainsAny(name[at:v], "?&")
	}
	p.read = max(p.read, v)
	return p.seen
}

// urlWords tells whether a byte of a name follows the start of a URL in
// its word, where the URL's reading (maskWord) decides what is secret. It
// reads each word once, however many keywords it holds: asked in order of
// the bytes, it keeps the word it was asked about last.
type urlWords struct {
	start, end int // the word: name[start:end]
	url        int // where in it the text is inside a URL, or end
}

// in reports whether name[i], a byte that is no white space, follows the
// start of a URL in its word: the word's first "://" before it, with a
// scheme before that (see urlStart).
func (u *urlWords) in(name string, i int) bool {
	if i < u.start || i >= u.end {
		u.start, u.end = i, i
		for u.start > 0 && !isWordSpace(name[u.start-1]) {
			u.start--
		}
		for u.end < len(name) && !isWordSpace(name[u.end]) {
			u.end++
		}
		w := name[u.start:u.end]
		u.url = u.end
		if k := strings.Index(w, "://"); k >= 0 && urlStart(w[:k+len("://")]) >= 0 {
			u.url = u.start + k + len("://")
		}
	}
	return i >= u.url
}

// isKeywordByte reports whether c may appear in a keyword: a letter, a
// digit or an underscore.
func isKeywordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// isKeyByte reports whether c may appear in a keyword, %-escaped if
// escaped: a keyword's byte, or a '%' too.
func isKeyByte(c byte, escaped bool) bool { return isKeywordByte(c) || escaped && c == '%' }

// isSecretKey reports whether key, %-escaped or not, is a password
// keyword. A key that does not unescape is none, as a query's parameter
// with such a name is not read.
func isSecretKey(key string) bool {
	if strings.IndexByte(key, '%') < 0 {
		return connstr.IsSecretKey(key)
	}
	dec, err := url.QueryUnescape(key)
	return err == nil && connstr.IsSecretKey(dec)
}

// maskTail masks the passwords of a keyword/value connection string that
// ends name after words of its own ("orders host=db password='a b'"). Read
// word by word, a quoted password with a space in it, or one written
// "password = pw", would not be found; read whole from its first pair, it
// is. Only the secrets of a string that reads cleanly are replaced, so
// other text never changes.
func maskTail(name string) string {
	i := connstr.KeywordValueTail(name)
	if i < 0 {
		return name
	}
	return name[:i] + names.mask(name[i:], connstr.Read(name[i:]).Secrets, true)
}

// wordSpaces separate the words of a name: ASCII's white space, which
// also ends a bare keyword/value value.
const wordSpaces = " \t\n\v\f\r"

// isWordSpace reports whether c separates the words of a name.
func isWordSpace(c byte) bool { return strings.IndexByte(wordSpaces, c) >= 0 }

// maskWords masks each word of name on its own; see Mask.
func (m masker) maskWords(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); {
		end := wordEnd(name, i)
		b.WriteString(m.maskWord(name[i:end]))
		if end < len(name) {
			b.WriteByte(name[end])
			end++
		}
		i = end
	}
	return b.String()
}

// wordEnd returns where the word starting at name[i] ends: at the next
// white space that no backslash escapes, or at the end of name. A
// keyword/value value may hold an escaped space ("password=a\ b"), and
// split there its second half would show.
func wordEnd(name string, i int) int {
	escaped := false
	for ; i < len(name); i++ {
		switch c := name[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case isWordSpace(c):
			return i
		}
	}
	return len(name)
}

// maskWord masks the URL in one word of a name, if it holds one.
func (m masker) maskWord(w string) string {
	start := urlStart(w)
	if start < 0 {
		// "password=pw" on its own is a keyword/value string.
		if r := connstr.Read(w); r.Problem == "" {
			return m.mask(w, r.Secrets, !r.URL)
		}
		return w
	}
	return w[:start] + m.mask(w[start:], connstr.Read(w[start:]).Secrets, false)
}

// urlStart returns where the URL in the word w starts, or -1 if it holds
// none: the scheme before its first "://", from the scheme's first letter,
// so that a '-' or a digit before it ("-postgres://") is not read as part
// of a scheme no URL has.
func urlStart(w string) int {
	k := strings.Index(w, "://")
	if k <= 0 {
		return -1
	}
	start := k
	for start > 0 && isSchemeByte(w[start-1]) {
		start--
	}
	for start < k && !isLetter(w[start]) {
		start++
	}
	if start == k {
		return -1
	}
	return start
}

// isLetter reports whether c is an ASCII letter, which a URL scheme starts
// with.
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isSchemeByte reports whether c may appear in a URL scheme.
func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}
