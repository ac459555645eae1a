package shoalpgx

// batchBuildError is the error of a pipelined batch that failed before it
// was sent: an argument failed to encode, or the arguments do not match the
// statement's parameters. It reads as pgx's pgx.ErrPreprocessingBatch of
// the same failure, "error preprocessing batch (build): ...", which only
// pgx can make (its fields are its own); like that one it unwraps to the
// encoding's error and keeps the statement's SQL out of its text.
type batchBuildError struct {
	sql string
	err error
}

func (e *batchBuildError) Error() string {
	return "error preprocessing batch (build): " + e.err.Error()
}

// Unwrap returns the encoding's error.
func (e *batchBuildError) Unwrap() error { return e.err }

// SQL returns the statement whose arguments failed, as pgx's does.
func (e *batchBuildError) SQL() string { return e.sql }

// batchBuildErr is err, the failure to build the statement sql of a batch
// run as sm, as pgx reports it: wrapped in every mode but
// QueryExecModeExec, where pgx builds a batch without describing it and
// returns the encoding's error as it is.
func batchBuildErr(sm stmtMode, sql string, err error) error {
	if sm == modeUnnamed {
		return err
	}
	return &batchBuildError{sql: sql, err: err}
}
