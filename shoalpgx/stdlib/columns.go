package stdlib

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// These describe a result's columns for sql.Rows.ColumnTypes, from the
// field descriptions the server sent with the rows: nothing here asks the
// server. Nullability is not reported (ColumnTypeNullable), since the
// server does not send it with the rows and the connection is busy with
// them while they are read.

// ColumnTypeDatabaseTypeName returns the column's type name in upper case
// (INT4, TEXT, TIMESTAMPTZ, _INT8 for an array), or its OID in decimal for
// a type pgx does not know (an enum, a domain, an extension's type).
func (r *sqlRows) ColumnTypeDatabaseTypeName(i int) string {
	oid := r.fields[i].DataTypeOID
	if t, ok := r.c.conn.TypeMap().TypeForOID(oid); ok {
		return strings.ToUpper(t.Name)
	}
	return strconv.FormatUint(uint64(oid), 10)
}

// ColumnTypeScanType returns the type of the values Next gives for the
// column (see Conn): a NULL is nil, and an infinite date or timestamp a
// string, whatever this says.
func (r *sqlRows) ColumnTypeScanType(i int) reflect.Type {
	switch r.fields[i].DataTypeOID {
	case pgtype.BoolOID:
		return reflect.TypeFor[bool]()
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID:
		return reflect.TypeFor[int64]()
	case pgtype.Float4OID, pgtype.Float8OID:
		return reflect.TypeFor[float64]()
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID:
		return reflect.TypeFor[[]byte]()
	case pgtype.DateOID, pgtype.TimestampOID, pgtype.TimestamptzOID:
		return reflect.TypeFor[time.Time]()
	}
	return reflect.TypeFor[string]()
}

// varHeaderSize is what PostgreSQL adds to a type modifier (VARHDRSZ).
const varHeaderSize = 4

// ColumnTypeLength returns the length limit of a text or binary column:
// n for varchar(n) and char(n), unlimited (math.MaxInt64) for text, bytea
// and varchar without a limit. Other types have none (ok false).
func (r *sqlRows) ColumnTypeLength(i int) (length int64, ok bool) {
	f := r.fields[i]
	switch f.DataTypeOID {
	case pgtype.TextOID, pgtype.ByteaOID:
		return math.MaxInt64, true
	case pgtype.VarcharOID, pgtype.BPCharOID:
		if f.TypeModifier < varHeaderSize {
			return math.MaxInt64, true
		}
		return int64(f.TypeModifier - varHeaderSize), true
	}
	return 0, false
}

// ColumnTypePrecisionScale returns a numeric(p, s) column's precision and
// scale; ok is false for other types and for numeric without them. The
// scale may be negative (PostgreSQL 15 allows numeric(2, -3)).
func (r *sqlRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	f := r.fields[i]
	if f.DataTypeOID != pgtype.NumericOID || f.TypeModifier < varHeaderSize {
		return 0, 0, false
	}
	mod := f.TypeModifier - varHeaderSize
	// The scale is the low 11 bits, signed (PostgreSQL's numeric_typmod_scale).
	return int64(mod >> 16 & 0xffff), int64((mod&0x7ff)^0x400) - 0x400, true
}
