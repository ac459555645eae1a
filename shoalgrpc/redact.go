package shoalgrpc

import (
	"cmp"
	"slices"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
)

// redactedWord replaces a credential.
const redactedWord = "REDACTED"

// targetSecrets finds, by position, the parts of a target that must not be
// shown: the user information, from the start of the authority (or of the
// target, without "scheme://") to the last '@' before the query, and the
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
// and net quote the whole target, the endpoint after the authority, the
// host without its port ("lookup user@host"), or the query. A piece
// starts at the target's start or after a '/', and ends at the end, the
// query, a ':' or a '/', always holding the character after the user
// information (its '@'), so that it never matches unrelated text.
func quotedPieces(target string) *strings.Replacer {
	secrets := targetSecrets(target)
	body := target
	if i := strings.IndexByte(target, '?'); i >= 0 {
		body = target[:i]
	}
	starts, ends := []int{0}, []int{len(target), len(body)}
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '/':
			starts = append(starts, i+1)
			ends = append(ends, i)
		case ':':
			ends = append(ends, i)
		}
	}
	type piece struct{ s, e int }
	var pieces []piece
	for _, sec := range secrets {
		if sec.End == len(target) { // the query: with its '?', or with what precedes it
			pieces = append(pieces, piece{sec.Start - 1, sec.End})
			for _, s := range starts {
				pieces = append(pieces, piece{s, len(target)})
			}
			continue
		}
		for _, s := range starts {
			for _, e := range ends {
				if s < sec.End && e > sec.End {
					pieces = append(pieces, piece{s, e})
				}
			}
		}
	}
	// Longest first: at each place in a message the replacer takes the
	// first piece that matches, and the whole target must win over its
	// parts.
	slices.SortFunc(pieces, func(a, b piece) int { return cmp.Compare(b.e-b.s, a.e-a.s) })
	var oldNew []string
	seen := map[string]bool{}
	for _, pc := range pieces {
		text := target[pc.s:pc.e]
		if seen[text] {
			continue
		}
		seen[text] = true
		var shifted []connstr.Span
		for _, sec := range secrets {
			if s, e := max(sec.Start, pc.s), min(sec.End, pc.e); s < e {
				shifted = append(shifted, connstr.Span{Start: s - pc.s, End: e - pc.s})
			}
		}
		oldNew = append(oldNew, text, connstr.Reading{Secrets: shifted}.Mask(text, redactedWord))
	}
	return strings.NewReplacer(oldNew...)
}
