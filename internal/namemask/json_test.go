package namemask

import "testing"

// jsonCases are names and text with a password member written as JSON
// writes it, as a document or inside a JSON string, and what Mask masks
// them to.
var jsonCases = []struct{ name, want string }{
	{`{"password":"pw"}`, `{"password":"xxxxx"}`},
	{`{"password":"p w"}`, `{"password":"xxxxx"}`},
	{`{"user": "app", "Password" : "p w", "db": "x"}`, `{"user": "app", "Password" : "xxxxx", "db": "x"}`},
	{`{"token":"a\"b, c"}`, `{"token":"xxxxx"}`},
	{`{"password":"a\\"}, x`, `{"password":"xxxxx"}, x`},
	{`{"password":"a token=b"}`, `{"password":"xxxxx"}`},
	{`{"password":"postgres://u:pw@db/x"}`, `{"password":"xxxxx"}`},
	// In text that is itself a JSON string: the quotes escaped.
	{`{"query": "{\"password\":\"pw\"}"}`, `{"query": "{\"password\":\"xxxxx\"}"}`},
	{`"{\"password\":\"a\\\"b\", \"x\":1}"`, `"{\"password\":\"xxxxx\", \"x\":1}"`},
	// A string never closed: to the end, its quote with it, as a
	// quoted value that never closes.
	{`{"password":"p w`, `{"password":xxxxx`},
	{`{\"password\":\"p w`, `{\"password\":xxxxx`},
	// No password: left as written.
	{`{"password":""}`, `{"password":""}`},
	{`{"password":null, "n":1}`, `{"password":null, "n":1}`},
	{`{"passwords":"pw", "user":"password"}`, `{"passwords":"pw", "user":"password"}`},
	{`{"db_password":"pw"}`, `{"db_password":"pw"}`},
}

// A password member written as JSON writes it, "password":"...", has the
// text of its string masked and its quotes kept, as a quoted value with
// text after it keeps them, in Mask and in Text; nothing else changes.
func TestMaskJSONMember(t *testing.T) {
	checkMasked(t, jsonCases)
}
