package shoalpgx

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// A request keeps copies of its rows, whether the first goes into the
// request's own arrays or not: NULLs stay NULL, empty values stay empty,
// and reusing the reader's buffer afterwards changes nothing kept.
func TestPipeReqKeepsRowsApartFromTheReadBuffer(t *testing.T) {
	long := bytes.Repeat([]byte("v"), 100)
	cases := map[string][][][]byte{
		"one small row":             {{[]byte("1"), nil, []byte("")}},
		"no columns":                {{}, {}},
		"five columns":              {{[]byte("a"), []byte("b"), nil, []byte("d"), []byte("e")}},
		"a first row past 64 bytes": {{long}, {[]byte("x")}},
		"many rows": func() [][][]byte {
			var rows [][][]byte
			for i := range 300 {
				rows = append(rows, [][]byte{[]byte(fmt.Sprint(i)), bytes.Repeat([]byte("r"), i%70)})
			}
			return rows
		}(),
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			r := newPipeReq(1)
			r.conn = &pipeConn{}
			for _, row := range want {
				// The reader's buffer: one copy, overwritten once taken.
				buf := make([][]byte, len(row))
				for i, v := range row {
					if v != nil {
						buf[i] = append([]byte{}, v...)
					}
				}
				r.take(&pgproto3.DataRow{Values: buf})
				for _, v := range buf {
					for i := range v {
						v[i] = '#'
					}
				}
			}
			r.take(&pgproto3.CommandComplete{CommandTag: []byte(fmt.Sprintf("SELECT %d", len(want)))})
			res := r.result(0)
			if len(res.rows) != len(want) {
				t.Fatalf("%d rows kept, want %d", len(res.rows), len(want))
			}
			for i, row := range res.rows {
				if !slices.EqualFunc(row, want[i], func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }) {
					t.Fatalf("row %d: %q, want %q", i, row, want[i])
				}
			}
			if got := res.tag.String(); got != fmt.Sprintf("SELECT %d", len(want)) {
				t.Fatalf("tag %q", got)
			}
		})
	}
}

// The command tag a connection reuses is the one the server sent: a tag
// that differs from the last is read anew.
func TestPipeConnTagFollowsTheServer(t *testing.T) {
	c := &pipeConn{}
	for _, tag := range []string{"SELECT 1", "SELECT 1", "INSERT 0 1", "SELECT 1", "", "UPDATE 2"} {
		if got := c.tag([]byte(tag)); got.String() != tag {
			t.Fatalf("tag(%q) = %q", tag, got.String())
		}
	}
}
