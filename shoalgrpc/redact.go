package shoalgrpc

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
	"google.golang.org/grpc/resolver"
)

// redactedWord replaces a credential.
const redactedWord = "REDACTED"

// targetSecrets finds, by position, the parts of a target that must not be
// shown: the user information, from the start of the authority (or of the
// endpoint, without "scheme://") to the last '@' before the query, and the
// query. A target such as "dns://user:secret@resolver/host:443?token=..."
// may carry credentials in either. Positions, not values: a credential
// that is a common word or a single letter must mask itself, not every
// copy of its text.
func targetSecrets(target string) []connstr.Span {
	body, q := target, -1
	if i := strings.IndexByte(target, '?'); i >= 0 {
		body, q = target[:i], i
	}
	start := 0
	if i := strings.Index(body, "://"); i >= 0 {
		start = i + len("://")
	} else if scheme, ok := resolvedScheme(target); ok {
		start = len(scheme) + len(":") // "passthrough:user:pw@host"
	}
	for start < len(body) && body[start] == '/' { // "dns:///user@host"
		start++
	}
	var out []connstr.Span
	if at := strings.LastIndexByte(body[start:], '@'); at > 0 {
		out = append(out, connstr.Span{Start: start, End: start + at})
	}
	if q >= 0 && q+1 < len(target) {
		out = append(out, connstr.Span{Start: q + 1, End: len(target)})
	}
	return out
}

// resolvedScheme returns the scheme of a target without "//" when grpc-go
// reads it as one: the target parses as a URL and a resolver is registered
// for its scheme. Otherwise grpc-go dials "dns:///" + target, and what
// looks like a scheme ("user:pw@host") is user information. A resolver
// given only as a dial option is not seen here; its scheme is masked with
// the rest, which hides more, never less.
func resolvedScheme(target string) (string, bool) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || resolver.Get(u.Scheme) == nil {
		return "", false
	}
	return u.Scheme, true
}

// redactTarget returns target fit for errors and logs, each credential
// replaced by REDACTED where it stands.
func redactTarget(target string) string {
	return connstr.Reading{Secrets: targetSecrets(target)}.Mask(target, redactedWord)
}

// redactedError hides the target's credentials in an error's message,
// including messages of wrapped errors (grpc-go quotes the target it
// could not parse). errors.Is and errors.As still see the wrapped error.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with the target's credentials masked in its message.
// Most targets have nothing to hide and err is returned as it is.
func (p *Pool) redact(err error) error {
	if err == nil || p.target == p.shownTarget {
		return err
	}
	return &redactedError{msg: p.redactor.Replace(err.Error()), err: err}
}

// quotedPieces returns a replacer of the pieces of target that an error
// may quote with a credential in them, each by its masked self. grpc-go
// and net quote the whole target, the endpoint after the authority or
// after the scheme ("passthrough:user:pw@host:443"), the host without its
// port ("lookup user@host"), or the query.
//
// They quote the target as grpc-go read it, not only as it was written:
// grpc-go parses it with net/url, which decodes the %-escapes of the user
// information and the path, so "passthrough:///u%3Apw@host:1" is dialled,
// and quoted by net, as "u:pw@host:1". A password holding '@', ':' or '/'
// must be escaped, so the decoded form is the common one for such a
// password; both forms get their pieces. The query stays as written:
// grpc-go does not decode it.
func quotedPieces(target string) *strings.Replacer {
	secrets := targetSecrets(target)
	body := target
	if i := strings.IndexByte(target, '?'); i >= 0 {
		body = target[:i]
	}
	pieces := piecesOf(target, len(body), secrets)
	if decoded, decodedSecrets, ok := decodeBody(body, secrets); ok {
		pieces = append(pieces, piecesOf(decoded, len(decoded), decodedSecrets)...)
	}
	// Longest first: at each place in a message the replacer takes the
	// first piece that matches, and the whole target must win over its
	// parts.
	slices.SortFunc(pieces, func(a, b piece) int { return cmp.Compare(len(b.text), len(a.text)) })
	var oldNew []string
	seen := map[string]bool{}
	for _, pc := range pieces {
		if seen[pc.text] {
			continue
		}
		seen[pc.text] = true
		oldNew = append(oldNew, pc.text, pc.masked)
	}
	return strings.NewReplacer(oldNew...)
}

// piece is a piece of a target that holds a credential, and its masked
// self.
type piece struct{ text, masked string }

// piecesOf returns the pieces of form, the target as written or decoded,
// whose query (if any) starts after bodyEnd, that hold one of secrets. A
// piece starts at the start of form, after its scheme's ':' or after a
// '/', and ends at the end, the query, a ':' or a '/', always holding the
// character after the user information (its '@'), so that it never
// matches unrelated text. The '/' and ':' are those of form: in the
// decoded form, an escaped one is where net splits what it quotes.
func piecesOf(form string, bodyEnd int, secrets []connstr.Span) []piece {
	starts, ends := []int{0}, []int{len(form), bodyEnd}
	if i := schemeEnd(form[:bodyEnd]); i >= 0 {
		starts = append(starts, i+1)
	}
	for i := 0; i < bodyEnd; i++ {
		switch form[i] {
		case '/':
			starts = append(starts, i+1)
			ends = append(ends, i)
		case ':':
			ends = append(ends, i)
		}
	}
	type bounds struct{ s, e int }
	var found []bounds
	for _, sec := range secrets {
		if sec.Start > bodyEnd { // the query: with its '?', or with what precedes it
			found = append(found, bounds{sec.Start - 1, sec.End})
			for _, s := range starts {
				found = append(found, bounds{s, len(form)})
			}
			continue
		}
		for _, s := range starts {
			for _, e := range ends {
				if s < sec.End && e > sec.End {
					found = append(found, bounds{s, e})
				}
			}
		}
	}
	out := make([]piece, 0, len(found))
	for _, b := range found {
		var shifted []connstr.Span
		for _, sec := range secrets {
			if s, e := max(sec.Start, b.s), min(sec.End, b.e); s < e {
				shifted = append(shifted, connstr.Span{Start: s - b.s, End: e - b.s})
			}
		}
		text := form[b.s:b.e]
		out = append(out, piece{text, connstr.Reading{Secrets: shifted}.Mask(text, redactedWord)})
	}
	return out
}

// schemeEnd returns the index of the ':' that ends the URL scheme s starts
// with (RFC 3986: a letter, then letters, digits, '+', '-' or '.'), or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return i
		default:
			return -1
		}
	}
	return -1
}

// decodeBody returns body, a target without its query, as net/url decodes
// it for grpc-go, and secrets (those of the user information) moved to
// where they stand in it. ok is false when body has nothing to decode, or
// an escape net/url refuses: grpc-go then refuses the target, quoting it
// as written.
func decodeBody(body string, secrets []connstr.Span) (decoded string, moved []connstr.Span, ok bool) {
	if !strings.Contains(body, "%") {
		return "", nil, false
	}
	decoded, err := url.PathUnescape(body)
	if err != nil {
		return "", nil, false
	}
	// A secret starts and ends outside any escape (at the start of the
	// authority or endpoint, at an '@'), so the decoded length of what
	// precedes each end is where that end stands in decoded.
	at := func(i int) (int, bool) {
		d, err := url.PathUnescape(body[:i])
		return len(d), err == nil
	}
	for _, sec := range secrets {
		if sec.Start > len(body) { // the query's
			continue
		}
		start, ok1 := at(sec.Start)
		end, ok2 := at(sec.End)
		if !ok1 || !ok2 {
			return "", nil, false
		}
		moved = append(moved, connstr.Span{Start: start, End: end})
	}
	return decoded, moved, true
}
