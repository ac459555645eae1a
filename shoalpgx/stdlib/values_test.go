package stdlib_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Each type goes to the server as a Go argument and comes back as the
// driver.Value the Conn doc promises (scanned into an any, which
// database/sql fills with the driver's value as it is), in the default
// query mode, where the driver picks the result formats, and in the simple
// protocol, where every result is text. NULL of each type comes back nil.
func TestSQLTypesRoundTrip(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)

	when := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.FixedZone("", 2*3600))
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	stamp := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	uuid := "f47ac10b-58cc-4372-a567-0e02b2c3d479"
	for _, tc := range []struct {
		typ  string
		arg  any
		want any
	}{
		{"boolean", true, true},
		{"smallint", int16(-7), int64(-7)},
		{"integer", int32(math.MaxInt32), int64(math.MaxInt32)},
		{"bigint", int64(math.MinInt64), int64(math.MinInt64)},
		{"oid", uint32(4000000000), int64(4000000000)},
		{"real", float32(1.1), 1.1},
		{"double precision", 0.1, 0.1},
		{"text", "héllo, wörld", "héllo, wörld"},
		{"varchar(20)", "v", "v"},
		{"char(4)", "ab", "ab  "},
		{"name", "pg_class", "pg_class"},
		{`"char"`, "q", "q"},
		{"bytea", []byte{0, 1, 0xfe, 0xff}, []byte{0, 1, 0xfe, 0xff}},
		{"timestamptz", when, when},
		{"timestamp", stamp, stamp},
		{"date", day, day},
		{"timestamptz", pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, "infinity"},
		{"date", pgtype.Date{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, "-infinity"},
		{"numeric", "12345678901234567890.000123", "12345678901234567890.000123"},
		{"numeric(6,2)", 3.14159, "3.14"},
		{"uuid", uuid, uuid},
		{"jsonb", `{"b": [1, 2], "a": "x"}`, []byte(`{"a": "x", "b": [1, 2]}`)},
		{"json", json.RawMessage(`{"z":1,  "a":2}`), []byte(`{"z":1,  "a":2}`)},
		{"bigint[]", []int64{1, 2, 3}, "{1,2,3}"},
		{"text[]", []*string{ptr("a b"), nil, ptr(`q"`)}, `{"a b",NULL,"q\""}`},
		{"interval", 26 * time.Hour, "26:00:00"},
		{"inet", "192.0.2.1/24", "192.0.2.1/24"},
		{"int4range", "[1,5)", "[1,5)"},
	} {
		for _, mode := range []struct {
			name string
			opts []any
		}{{"default", nil}, {"simple", []any{pgx.QueryExecModeSimpleProtocol}}} {
			t.Run(tc.typ+"/"+mode.name, func(t *testing.T) {
				var got any
				args := append(append([]any(nil), mode.opts...), tc.arg)
				if err := db.QueryRowContext(ctx, "select $1::"+tc.typ, args...).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if !sameValue(got, tc.want) {
					t.Fatalf("got %T %#v, want %T %#v", got, got, tc.want, tc.want)
				}
				got = "not nil"
				if err := db.QueryRowContext(ctx, "select null::"+tc.typ, mode.opts...).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != nil {
					t.Fatalf("NULL came back as %T %#v, want nil", got, got)
				}
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

// sameValue compares driver values: times by instant, bytes by content,
// the rest by type and value.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	}
	return reflect.DeepEqual(got, want)
}

// The values scan into what programs scan them into: sql.Null types,
// strings for numeric and uuid, json.RawMessage for jsonb, a slice through
// pgtype's SQLScanner for an array, pgtype.Numeric from its text.
func TestSQLScanIntoGoTypes(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	var (
		n      sql.NullInt64
		f      float64
		num    string
		pgnum  pgtype.Numeric
		raw    json.RawMessage
		ints   []int64
		texts  []string
		ts     time.Time
		nullTS sql.NullTime
		b      []byte
	)
	m := pgtype.NewMap()
	err := db.QueryRowContext(ctx, `select null::int, 2.5::real, 1.10::numeric, 9.99::numeric, '{"k": [1]}'::jsonb,
		'{4,5,6}'::int8[], '{x,"y z"}'::text[], '2020-01-02 03:04:05+00'::timestamptz, null::timestamptz, '\x0102'::bytea`).
		Scan(&n, &f, &num, &pgnum, &raw, m.SQLScanner(&ints), m.SQLScanner(&texts), &ts, &nullTS, &b)
	if err != nil {
		t.Fatal(err)
	}
	if n.Valid || f != 2.5 || num != "1.10" || string(raw) != `{"k": [1]}` {
		t.Errorf("null int %+v, real %v, numeric %q, jsonb %s", n, f, num, raw)
	}
	if v, err := pgnum.Float64Value(); err != nil || v.Float64 != 9.99 {
		t.Errorf("pgtype.Numeric %+v (%v, %v), want 9.99", pgnum, v, err)
	}
	if !reflect.DeepEqual(ints, []int64{4, 5, 6}) || !reflect.DeepEqual(texts, []string{"x", "y z"}) {
		t.Errorf("arrays through SQLScanner: %v, %q", ints, texts)
	}
	if !ts.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) || nullTS.Valid || !bytes.Equal(b, []byte{1, 2}) {
		t.Errorf("timestamptz %v, null timestamptz %+v, bytea %x", ts, nullTS, b)
	}

	// pgx encodes a Go map argument as JSON (in the default query mode;
	// the simple protocol has no type to encode it for).
	if err := db.QueryRowContext(ctx, "select $1::jsonb", map[string]any{"b": []int{1, 2}, "a": "x"}).Scan(&raw); err != nil || string(raw) != `{"a": "x", "b": [1, 2]}` {
		t.Errorf("a map as jsonb: %s, %v", raw, err)
	}
}

// sql.Rows.ColumnTypes describes the columns from what the server sent:
// names, database type names, the Go type Next gives, lengths of text
// columns, precision and scale of numeric ones.
func TestSQLColumnTypes(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sc := newTestSQLConn(t, db)
	if _, err := sc.ExecContext(ctx, `create temporary table coltypes (
		id bigint, name varchar(20), code char(3), body text, price numeric(10,2), big numeric,
		small numeric(2,-3), at timestamptz, ok boolean, data bytea, tags text[], u uuid)`); err != nil {
		t.Fatal(err)
	}
	rows, err := sc.QueryContext(ctx, "select * from coltypes")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	type col struct {
		name, db     string
		scan         reflect.Type
		length       int64
		hasLength    bool
		prec, scale  int64
		hasPrecScale bool
	}
	str, i64, tm := reflect.TypeFor[string](), reflect.TypeFor[int64](), reflect.TypeFor[time.Time]()
	want := []col{
		{name: "id", db: "INT8", scan: i64},
		{name: "name", db: "VARCHAR", scan: str, length: 20, hasLength: true},
		{name: "code", db: "BPCHAR", scan: str, length: 3, hasLength: true},
		{name: "body", db: "TEXT", scan: str, length: math.MaxInt64, hasLength: true},
		{name: "price", db: "NUMERIC", scan: str, prec: 10, scale: 2, hasPrecScale: true},
		{name: "big", db: "NUMERIC", scan: str},
		{name: "small", db: "NUMERIC", scan: str, prec: 2, scale: -3, hasPrecScale: true},
		{name: "at", db: "TIMESTAMPTZ", scan: tm},
		{name: "ok", db: "BOOL", scan: reflect.TypeFor[bool]()},
		{name: "data", db: "BYTEA", scan: reflect.TypeFor[[]byte](), length: math.MaxInt64, hasLength: true},
		{name: "tags", db: "_TEXT", scan: str},
		{name: "u", db: "UUID", scan: str},
	}
	if len(cols) != len(want) {
		t.Fatalf("%d columns, want %d", len(cols), len(want))
	}
	for i, c := range cols {
		length, hasLength := c.Length()
		prec, scale, hasPrecScale := c.DecimalSize()
		got := col{c.Name(), c.DatabaseTypeName(), c.ScanType(), length, hasLength, prec, scale, hasPrecScale}
		if got != want[i] {
			t.Errorf("column %d: %+v, want %+v", i+1, got, want[i])
		}
	}
	// A type pgx does not know is named by its OID.
	if _, err := sc.ExecContext(ctx, "create type pg_temp.mood as enum ('ok')"); err != nil {
		t.Fatal(err)
	}
	rows2, err := sc.QueryContext(ctx, "select 'ok'::pg_temp.mood")
	if err != nil {
		t.Fatal(err)
	}
	defer rows2.Close()
	cols2, err := rows2.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	if name := cols2[0].DatabaseTypeName(); name == "" || strings.Trim(name, "0123456789") != "" {
		t.Errorf("an enum's DatabaseTypeName is %q, want its OID", name)
	}
}
