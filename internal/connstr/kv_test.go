package connstr

import (
	"fmt"
	"strings"
	"testing"
)

// TestReadKeywordValue: the pairs of a keyword/value string as pgx reads
// them, and where and why a string that is not pairs stops.
func TestReadKeywordValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // key=value (as written) ..., then "! at N" if it stops
	}{
		{"", ""},
		{"   ", ""},
		{"host=h dbname=d", "[host=h] [dbname=d]"},
		{" \t host=h\n\r\v\fdbname=d  ", "[host=h] [dbname=d]"},
		{"host = h dbname\t=\td", "[host=h] [dbname=d]"},
		{"application_name=\n8 x=y", "[application_name=8] [x=y]"},
		{"password=a=b user=u", "[password=a=b] [user=u]"},
		{`password='a b\' c' user=u`, `[password='a b\' c'] [user=u]`},
		{`password='a\\' user=u`, `[password='a\\'] [user=u]`},
		{`password=a\ b user=u`, `[password=a\ b] [user=u]`},
		{`password=a\ `, `[password=a\ ]`},
		{`password=a\`, `[password=a\]`},
		{"application_name='x'user=u", "[application_name='x'] [user=u]"},
		{"password= user=u", "[password=user=u]"},
		{"password=", "[password=]"},
		{"password=''", "[password='']"},
		{"\u00a0user=u", "[\u00a0user=u]"},
		{"host=h junk", "[host=h] ! at 7: is neither"},
		{"host=h x y=1", "[host=h] ! at 7: has a keyword without '='"},
		{"=x", "! at 0: has a keyword without '='"},
		{"host=h password='a b", "[host=h] [password='a b] ! at 16: has a quoted value without its closing quote"},
		{`password='a\'`, `[password='a\'] ! at 9: has a quoted value`},
		// Read, not this, tells a URL apart.
		{"postgres://u:p@h/db", "! at 0: is neither"},
		{"postgres://h/db?sslmode=disable", "[postgres://h/db?sslmode=disable]"},
	} {
		kv := ReadKeywordValue(tc.in)
		var got []string
		for _, p := range kv.Pairs {
			got = append(got, "["+p.Key+"="+tc.in[p.Value.Start:p.Value.End]+"]")
		}
		if kv.Problem != "" {
			got = append(got, fmt.Sprintf("! at %d: %s", kv.Stop, kv.Problem))
		}
		if g := strings.Join(got, " "); !strings.HasPrefix(g, tc.want) || kv.Problem == "" && g != tc.want {
			t.Errorf("ReadKeywordValue(%q)\n got %s\nwant %s", tc.in, g, tc.want)
		}
	}
}
