package shoalpgx

import (
	"fmt"
	"strings"
	"testing"
)

// The cache answers as shareable does, the first time and from its map
// after.
func TestShareCacheAnswersAsShareable(t *testing.T) {
	var sc shareCache
	stmts := []string{
		"select 1",
		"SELECT pg_advisory_lock(1)",
		"select PG_TRY_ADVISORY_LOCK($1)",
		"begin",
		"  /* c */ SET search_path = x",
		"create temp table t (i int)",
		"create table t (i int)",
		"insert into t values ($1)",
		"select set_config('a.b', 'c', false)",
	}
	for round := range 2 {
		for _, s := range stmts {
			if got, want := sc.shareable(s), shareable(s); got != want {
				t.Errorf("round %d: %q: cache says %v, shareable %v", round, s, got, want)
			}
		}
	}
	m := sc.known.Load()
	if m == nil || len(*m) != len(stmts) {
		t.Fatalf("the cache holds %v, want all %d statements", m, len(stmts))
	}
	if !(*m)["select 1"] || (*m)["begin"] {
		t.Fatalf("the cache holds wrong answers: %v", *m)
	}
}

// Past its limits the cache answers without remembering.
func TestShareCacheStopsLearning(t *testing.T) {
	var sc shareCache
	for i := range shareCacheStatements {
		sc.shareable(fmt.Sprintf("select %d", i))
	}
	if sc.shareable("select pg_advisory_lock(7)") {
		t.Fatal("past the limit, a session statement was called shareable")
	}
	if n := len(*sc.known.Load()); n != shareCacheStatements {
		t.Fatalf("the cache holds %d statements, want it to stop at %d", n, shareCacheStatements)
	}
	if !sc.full.Load() {
		t.Fatal("a full cache still takes its lock on every new statement")
	}

	var big shareCache
	huge := "select '" + strings.Repeat("x", shareCacheBytes) + "'"
	if !big.shareable(huge) {
		t.Fatal("a long select was called not shareable")
	}
	if m := big.known.Load(); m != nil {
		t.Fatalf("the cache kept a statement longer than its %d bytes", shareCacheBytes)
	}
	big.shareable("select 1")
	if m := big.known.Load(); m == nil || len(*m) != 1 {
		t.Fatal("after a statement too long for it, the cache stopped learning short ones")
	}
}

// The text the cache holds stays within shareCacheBytes: long statements
// fill it, and once past half of it, one that does not fit ends the
// learning.
func TestShareCacheStopsAtItsBytes(t *testing.T) {
	var sc shareCache
	long := func(i int) string { return fmt.Sprintf("select %d, '%s'", i, strings.Repeat("x", 400<<10)) }
	for i := range 3 {
		sc.shareable(long(i))
	}
	m := *sc.known.Load()
	if _, kept := m[long(2)]; kept || len(m) != 2 {
		t.Fatalf("the cache holds %d statements of 400KB, want the first 2 within its %d bytes", len(m), shareCacheBytes)
	}
	if sc.bytes > shareCacheBytes || !sc.full.Load() {
		t.Fatalf("the cache holds %d bytes (full %v), want at most %d and full", sc.bytes, sc.full.Load(), shareCacheBytes)
	}
}
