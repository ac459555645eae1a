package shoalpgx

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal"
)

// Describing a statement before its first run. A statement a shared
// connection has not prepared yet runs unnamed, its arguments typed by
// their Go types (as in pgx's QueryExecModeExec), while its preparation
// goes out just ahead of it (pipeline_stmt.go). For most arguments the
// server reads the same value either way. Not for a byte slice: unnamed it
// goes as bytea, so a text column would store its hex form ("\x6869" for
// "hi") and a json one refuse it; nor for a Go type the type map does not
// know (a map or a struct for json), which the server could not read
// without a cast; nor for a time.Time outside UTC, which pgx writes in
// text in UTC, so that a timestamp or date parameter, which drops the
// zone, would read the UTC wall clock where pgx's binary encoding gives
// its own (an hour early, or the day before); nor for a float32, which
// pgx writes in text in its shortest decimal form (0.1) and in binary
// widened to a float8 or numeric parameter (0.10000000149011612); nor for
// a slice, which goes as an array, where json takes it as JSON; nor for a
// time.Duration, which goes as an interval, where bigint takes its
// nanoseconds. pgx's default mode describes the statement first and
// encodes each argument as its parameter's type. So a statement with such
// an argument waits for its preparation, one round trip on each connection
// the first time, and then runs by name, as pgx's does.

// describes reports whether one of args needs its parameter's type to be
// encoded as pgx's default mode encodes it: a slice or a pointer to one
// ([]byte and json.RawMessage among them), a float32, a time.Duration, a
// time.Time outside UTC, or a value of a Go type tm does not know.
func (tm *typeMap) describes(args []any) bool {
	for _, a := range args {
		switch a := a.(type) {
		case nil, string, int, int32, int64, bool, float64:
			continue
		case []byte, time.Duration, *time.Duration:
			return true
		case float32, *float32:
			// pgx writes it in text in its shortest decimal form (0.1),
			// and in binary for a float8 or numeric parameter widened
			// (0.10000000149011612): a statement's runs would store
			// either.
			return true
		case time.Time:
			if offUTC(a) {
				return true
			}
			continue
		case *time.Time:
			if a != nil && offUTC(*a) {
				return true
			}
			continue
		}
		t := reflect.TypeOf(a)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Slice {
			return true
		}
		tm.mu.Lock()
		_, known := tm.m.TypeForValue(a)
		tm.mu.Unlock()
		if !known {
			return true
		}
	}
	return false
}

// errPipeWhole is what building a request returns for a statement that
// needs describing and cannot be on a shared connection: the cache is
// full, or the preparation it waited for never came. The pool's operation
// then runs it on a whole connection, as without pipelining, where pgx
// describes it.
var errPipeWhole = errors.New("shoalpgx: statement needs a whole connection")

// syncOnly is a request of nothing but a Sync: its answer, a
// ReadyForQuery, comes once the server has answered everything ahead of it
// on the connection.
var syncOnly, _ = (&pgproto3.Sync{}).Encode(nil)

// describeFirst sends b's preparations, with a bare Sync of the caller's
// behind them, on l's connection, and waits for the Sync's answer: by then
// every preparation queued ahead of it, b's or another caller's, is
// answered, and the caller can build its request again, by name, on the
// same connection, still under l. On an error l is ended: released, or
// discarded when the connection broke, or, when ctx ended after the Sync
// was written, by the reader once its answer comes (as an abandoned
// request's lease is).
func (pp *pipePool) describeFirst(ctx context.Context, l shoal.Lease[*pipeConn], b *pipeBuild) error {
	c := b.c
	w := newPipeReq(1)
	w.buf = append(w.buf, syncOnly...)
	w.lease = l
	err := c.send(ctx, b.preps, w)
	b.preps = b.preps[:0]
	if err != nil {
		l.Discard()
		return err
	}
	if err := pp.wait(ctx, w); err != nil {
		return err
	}
	if w.err != nil {
		w.endLease()
		return w.err
	}
	return nil
}

// offUTC reports whether t's wall clock differs from UTC's: pgx writes a
// time in text in UTC, which a timestamp or date parameter reads as a wall
// clock. Its zone's offset says, not its Location, which is time.Local for
// time.Now() on a machine set to UTC too.
func offUTC(t time.Time) bool {
	_, off := t.Zone()
	return off != 0
}
