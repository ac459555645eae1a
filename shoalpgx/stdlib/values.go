package stdlib

import (
	"database/sql/driver"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// resultFormats asks the server for binary results for the types the driver
// turns into Go values (Conn lists them): binary is exact for floats,
// independent of DateStyle for dates and times, and half the size for
// bytea. Every other type comes as text, the form database/sql is given.
var resultFormats = pgx.QueryResultFormatsByOID{
	pgtype.BoolOID:        pgtype.BinaryFormatCode,
	pgtype.ByteaOID:       pgtype.BinaryFormatCode,
	pgtype.Int2OID:        pgtype.BinaryFormatCode,
	pgtype.Int4OID:        pgtype.BinaryFormatCode,
	pgtype.Int8OID:        pgtype.BinaryFormatCode,
	pgtype.OIDOID:         pgtype.BinaryFormatCode,
	pgtype.XIDOID:         pgtype.BinaryFormatCode,
	pgtype.CIDOID:         pgtype.BinaryFormatCode,
	pgtype.Float4OID:      pgtype.BinaryFormatCode,
	pgtype.Float8OID:      pgtype.BinaryFormatCode,
	pgtype.DateOID:        pgtype.BinaryFormatCode,
	pgtype.TimestampOID:   pgtype.BinaryFormatCode,
	pgtype.TimestamptzOID: pgtype.BinaryFormatCode,
}

// A decoder turns one column's non-NULL raw value into a driver.Value. It
// keeps no reference to src, which pgx reuses for the next row.
type decoder func(src []byte) (driver.Value, error)

// decoderFor returns the decoder for a column of type oid sent in format.
// It handles both formats, since a query mode other than the default
// (pgx.QueryExecModeSimpleProtocol, say) gets text for every type.
func decoderFor(m *pgtype.Map, oid uint32, format int16) decoder {
	switch oid {
	case pgtype.BoolOID:
		return scanTo[bool](m, oid, format, func(b bool) driver.Value { return b })
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID:
		return scanTo[int64](m, oid, format, func(n int64) driver.Value { return n })
	case pgtype.OIDOID, pgtype.XIDOID, pgtype.CIDOID:
		return scanTo[uint32](m, oid, format, func(n uint32) driver.Value { return int64(n) })
	case pgtype.Float4OID:
		return scanTo[float32](m, oid, format, float4Value)
	case pgtype.Float8OID:
		return scanTo[float64](m, oid, format, func(f float64) driver.Value { return f })
	case pgtype.ByteaOID:
		// pgtype copies bytea into a new slice.
		return scanTo[[]byte](m, oid, format, func(b []byte) driver.Value { return b })
	case pgtype.DateOID:
		return scanTo[pgtype.Date](m, oid, format, func(d pgtype.Date) driver.Value {
			return timeValue(d.Time, d.InfinityModifier)
		})
	case pgtype.TimestampOID:
		return scanTo[pgtype.Timestamp](m, oid, format, func(t pgtype.Timestamp) driver.Value {
			return timeValue(t.Time, t.InfinityModifier)
		})
	case pgtype.TimestamptzOID:
		return scanTo[pgtype.Timestamptz](m, oid, format, func(t pgtype.Timestamptz) driver.Value {
			return timeValue(t.Time, t.InfinityModifier)
		})
	}
	if format == pgtype.TextFormatCode {
		if oid == pgtype.JSONOID || oid == pgtype.JSONBOID {
			// Bytes, not a string: database/sql scans a string into
			// *string and *[]byte but not into json.RawMessage or other
			// named byte slices, the usual targets for JSON.
			return func(src []byte) (driver.Value, error) { return append([]byte(nil), src...), nil }
		}
		return func(src []byte) (driver.Value, error) { return string(src), nil }
	}
	// Binary for a type without a Go value of its own happens only when the
	// caller asked for it (a pgx.QueryResultFormats argument): pgtype's own
	// database/sql value then, or the raw bytes for a type it does not know.
	if t, ok := m.TypeForOID(oid); ok {
		return func(src []byte) (driver.Value, error) { return t.Codec.DecodeDatabaseSQLValue(m, oid, format, src) }
	}
	return func(src []byte) (driver.Value, error) { return append([]byte(nil), src...), nil }
}

// scanTo returns a decoder that scans into a T with pgtype's plan for the
// column, then converts the T with value.
func scanTo[T any](m *pgtype.Map, oid uint32, format int16, value func(T) driver.Value) decoder {
	var dst T
	plan := m.PlanScan(oid, format, &dst)
	return func(src []byte) (driver.Value, error) {
		if err := plan.Scan(src, &dst); err != nil {
			return nil, err
		}
		return value(dst), nil
	}
}

// float4Value widens a real to the float64 nearest its shortest decimal
// form, the one PostgreSQL prints: float64(float32(1.1)) is
// 1.100000023841858, which is not what was stored as far as the user can
// tell.
func float4Value(f float32) driver.Value {
	// Every float32 formats to a string that parses back, NaN and the
	// infinities included.
	d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return d
}

// timeValue is t, or for an infinite date or timestamp the text PostgreSQL
// prints for it, since time.Time has no infinity.
func timeValue(t time.Time, inf pgtype.InfinityModifier) driver.Value {
	switch inf {
	case pgtype.Infinity:
		return "infinity"
	case pgtype.NegativeInfinity:
		return "-infinity"
	}
	return t
}
