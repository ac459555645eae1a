package namemask

// closingPunct is what may follow a value in the text around it: a JSON
// string's closing quote (escaped or not), a comma, a parenthesis.
const closingPunct = `"'\,;:.)]}>`

// Text masks with word the passwords of the URLs and keyword/value pairs
// quoted in s, free text such as an error or a report, each where it
// stands, and changes nothing else: each word holding "://" is read as a
// URL from its scheme on, each word that is a keyword=value pair as one,
// and every password keyword outside a URL has its value masked, as in
// Mask, a password quoted as its writer meant it and the string of a
// JSON password member included. Unlike Mask, Text never reads s whole
// as one connection string, which would take the words after a URL into
// its last parameter.
//
// A word runs to the next white space, so a value at its end would take
// in the quote or comma that closes it. A value whose keyword follows an
// opening quote (SELECT 1 AS "password=pw", 2) ends before the quote
// that closes it, a space in it or not ("password=a b"), and a value
// that is already word, with only such punctuation after it, is left as
// it is: text that quotes a string masked before (a JSON document, a
// quoted command) keeps its closing quote. Any other value is masked whole, the text after it in its word
// included, since where it ends cannot be told.
func Text(s, word string) string {
	m := masker{word: word, keepMasked: true}
	return m.maskKeywordValues(m.maskWords(m.maskMeant(m.maskJSON(s))), false)
}
