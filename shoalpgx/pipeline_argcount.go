package shoalpgx

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// argCountError is the failure of a call whose arguments do not match its
// statement's parameters, on a shared connection that knows the statement.
// It reads as pgx's Build error, which pgx's Exec and batches return; pgx's
// Query words it differently (queryArgCount).
type argCountError struct{ params, args int }

func (e *argCountError) Error() string { return "mismatched param and argument count" }

// queryArgCount is err as pgx's Query reports it: pgx counts the arguments
// itself there, before it builds, in its own words.
func queryArgCount(err error) error {
	if err == nil {
		return nil // before ace, which escapes: a statement that succeeds allocates nothing here
	}
	var ace *argCountError
	if errors.As(err, &ace) {
		return fmt.Errorf("expected %d arguments, got %d", ace.params, ace.args)
	}
	return err
}

// argCountErr is the error of res, sql's statement run with args arguments
// on r's connection in QueryExecModeCacheStatement. A first run goes
// unnamed, so the server refuses a wrong count in its own words (SQLSTATE
// 08P01); the preparation sent ahead of it in the same write has been
// answered by then, and its parameters turn that refusal into the error
// pgx gives for the same call, which prepares first. When another caller's
// preparation was still on its way, the server's words stay.
func (r *pipeReq) argCountErr(res *pipeResult, sql string, args int) error {
	if res.err == nil || res.stmt != nil || !protocolViolation(res.err) {
		return res.err
	}
	if err := r.preparedArgCount(sql, args); err != nil {
		return err
	}
	return res.err
}

// protocolViolation reports whether err is the server's refusal of a
// message (SQLSTATE 08P01). Its own function, so that the variable
// errors.As needs, which escapes, is made only for a statement that failed.
func protocolViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "08P01"
}

// preparedArgCount is an argCountError when sql's statement, prepared on
// r's connection, does not have args parameters, and nil when it does or
// its preparation has not been answered.
func (r *pipeReq) preparedArgCount(sql string, args int) error {
	if r.conn == nil {
		return nil
	}
	s := &r.conn.stmts
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.bySQL[sql]; st != nil && st.sd != nil && len(st.sd.ParamOIDs) != args {
		return &argCountError{params: len(st.sd.ParamOIDs), args: args}
	}
	return nil
}
