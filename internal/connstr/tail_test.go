package connstr

import (
	"testing"

	"github.com/shoalpool/shoal/internal/connstr/connstrtest"
)

// tailByEachWord is KeywordValueTail as its doc says it: Read from each
// word after the first in turn.
func tailByEachWord(s string) int {
	for i := 1; i < len(s); i++ {
		if !isSpace(s[i-1]) || isSpace(s[i]) {
			continue
		}
		if r := Read(s[i:]); r.Problem == "" && !r.URL {
			return i
		}
	}
	return -1
}

// tailCases are texts that end, or do not, in a keyword/value string.
var tailCases = []string{
	"", "orders", "orders host=db password='a b'", "orders x host=db y", "a=1 b=2 c",
	"orders host=db x=1 y z=2", "orders postgres://u:pw@db/x", "orders postgres://db/x a=1",
	"orders -postgres://db/x a=1", " a=1", "x  a='b c'd=1", "x a='never closed", "x =1 a=2",
	"x a = 1 b", "x a='b' c", `x a=b\ c d=1`, "x\ta=1\nb=2 ", "x a=1=2 b=c'd e=f",
}

// The keyword/value string that ends a text starts at the first word
// from which Read reads the rest without a Problem, as when read from
// each word in turn.
func TestKeywordValueTail(t *testing.T) {
	for _, s := range tailCases {
		if got, want := KeywordValueTail(s), tailByEachWord(s); got != want {
			t.Errorf("KeywordValueTail(%q) = %d, want %d", s, got, want)
		}
	}
}

// FuzzKeywordValueTail: whatever the text, the tail found is the one
// reading from each word in turn finds.
func FuzzKeywordValueTail(f *testing.F) {
	for _, s := range tailCases {
		f.Add(s)
	}
	for _, pw := range connstrtest.Seeds {
		f.Add("orders " + connstrtest.KeywordValue("app", pw, "db", false).S + " x")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := KeywordValueTail(s), tailByEachWord(s); got != want {
			t.Fatalf("KeywordValueTail(%q) = %d, want %d", s, got, want)
		}
	})
}
