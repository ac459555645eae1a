package connstr

// KeywordValueTail returns where the first word of s after its first
// starts (a byte that is no white space, right after white space) from
// which Read reads the rest of s as a keyword/value string without a
// Problem, or -1 if none does: the connection string that ends a text
// after words of its own ("orders host=db password='a b'").
//
// It costs what s is long, where reading from each word in turn costs
// its square: a pair read from one word starts the same pairs on from
// there as from any other, so where a reading fails, every pair it went
// through is failed for the words after it too, and read no more.
func KeywordValueTail(s string) int {
	var failed []bool // by where a pair starts
	for i := 1; i < len(s); i++ {
		if !isSpace(s[i-1]) || isSpace(s[i]) || schemeEnd(s[i:]) > 0 {
			continue
		}
		if failed == nil {
			failed = make([]bool, len(s))
		}
		if readsToEnd(s, i, failed) {
			return i
		}
	}
	return -1
}

// readsToEnd reports whether s reads as pairs from s[i] to its end; each
// pair it reads on a reading that fails is marked in failed, and a pair
// marked there ends the reading as failed.
func readsToEnd(s string, i int, failed []bool) bool {
	start := i
	for i < len(s) && !failed[i] {
		_, next, stop := readPair(s, i)
		if stop != pairRead {
			break
		}
		i = next
	}
	if i == len(s) {
		return true
	}
	for j := start; j < len(s) && !failed[j]; {
		failed[j] = true
		_, j, _ = readPair(s, j)
	}
	return false
}
