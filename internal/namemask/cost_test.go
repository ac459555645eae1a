package namemask

import (
	"strings"
	"testing"
)

// costShapes are texts of 16,000 words in the shapes whose masking could
// cost the square of their length: each word read again from every word
// before it, or each value from every one before it.
var costShapes = []struct{ name, unit string }{
	// Prose with a pair in it: no keyword/value string ends it.
	{"prose", "the orders pool waits (primary), then host=db "},
	// Pairs and then a word that is none: every reading fails at the end.
	{"pairs", "host=db user=app dbname=orders sslmode=disable "},
	// A URL's later words, each with a password parameter.
	{"url-words", "password=pw&a=1 b "},
	// One word of many quoted values after separators.
	{"one-word", "(password='pw'),"},
	// Double-quoted values that no quote closes.
	{"open-quotes", `password="pw x `},
	// Values with a space in them in strings no quote closes, in both
	// quotes: each would read on to the end for the closing one.
	{"open-strings", `"password=a b 'token=c d `},
}

// costText returns shape repeated to 16,000 words, after a URL for the
// url-words shape and before a word that is no pair for the pairs shape;
// the one word, 4,000 times.
func costText(name, unit string) string {
	n := 16000 / max(1, strings.Count(unit, " "))
	if name == "one-word" {
		n = 4000
	}
	s := strings.Repeat(unit, n)
	switch name {
	case "pairs":
		s += "x"
	case "url-words":
		s = "postgres://u:pw@db/x?a=1 " + s
	}
	return s
}

// BenchmarkMask masks names of 16,000 words: compared with a run before a
// change, it tells whether the change made masking cost more per byte.
func BenchmarkMask(b *testing.B) {
	benchmarkMasking(b, Mask)
}

// BenchmarkText masks free text of 16,000 words with Text.
func BenchmarkText(b *testing.B) {
	benchmarkMasking(b, func(s string) string { return Text(s, "MASK") })
}

// benchmarkMasking runs mask over each of costShapes.
func benchmarkMasking(b *testing.B, mask func(string) string) {
	for _, c := range costShapes {
		s := costText(c.name, c.unit)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				mask(s)
			}
		})
	}
}
