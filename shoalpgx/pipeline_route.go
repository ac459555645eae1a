package shoalpgx

import (
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// What may share a connection. A pipelined statement runs in the implicit
// transaction its own Sync ends, on a session other callers use before and
// after it, so a statement that leaves anything behind in the session
// (a transaction, a setting, a cursor, a prepared statement, a LISTEN, a
// temporary table, a session advisory lock) goes to a whole connection, as
// without pipelining. The look is at the statement's first keyword and a
// few function names; what it misses is still caught when a transaction is
// left open (pipeConn.read), not when a setting is (see the package doc).

// sessionKeywords are the first keywords of statements that begin or end
// a transaction or leave session state behind. DO runs code that may do
// either, out of the look's sight; an Exec of a DO block, whose code has
// semicolons, went to a whole connection already.
var sessionKeywords = map[string]bool{
	"begin": true, "start": true, "commit": true, "end": true, "rollback": true, "abort": true,
	"savepoint": true, "release": true, "prepare": true, "execute": true, "deallocate": true,
	"set": true, "reset": true, "listen": true, "unlisten": true,
	"declare": true, "fetch": true, "move": true, "close": true, "discard": true,
	"lock": true, "copy": true, "load": true, "do": true,
}

// sessionFunctions are functions whose calls leave session state behind:
// session advisory locks (the transaction-level pg_advisory_xact_lock
// ends at the Sync and may share), settings, dblink's named connections.
var sessionFunctions = []string{"pg_advisory_lock", "pg_try_advisory_lock", "pg_advisory_unlock", "set_config", "dblink_connect"}

// shareable reports whether sql may run on a shared connection. A text of
// one word does not: pgx takes it for the name of a statement prepared on
// the connection (AfterConnect's conn.Prepare) when there is one, which a
// shared connection, whose statements the pool encodes itself, would send
// as SQL; and statements of one word are few.
func shareable(sql string) bool {
	if strings.IndexFunc(sql, unicode.IsSpace) < 0 {
		return false
	}
	word, rest := firstKeyword(sql)
	if sessionKeywords[word] {
		return false
	}
	if word == "explain" { // EXPLAIN ANALYZE runs what it explains
		return shareable(explained(rest))
	}
	if word == "create" {
		next, rest := firstKeyword(rest)
		if next == "or" { // CREATE OR REPLACE TEMP VIEW
			if next, rest = firstKeyword(rest); next == "replace" {
				next, _ = firstKeyword(rest)
			}
		}
		switch next {
		case "temp", "temporary", "local", "global":
			return false
		}
	}
	// SELECT ... INTO TEMP, and anything made in the session's own
	// schema (CREATE TABLE pg_temp.t), in a statement of any kind. An
	// UPDATE of pg_settings is a SET; a read of it costs only the sharing.
	if intoTemp(sql) || containsFold(sql, "pg_temp") || containsFold(sql, "pg_settings") {
		return false
	}
	for _, f := range sessionFunctions {
		if containsFold(sql, f) {
			return false
		}
	}
	return true
}

// firstKeyword returns sql's first word, lowercased, past whitespace,
// comments, opening parentheses and semicolons, and what follows it. The
// server's parser drops empty statements, so ";SET x = 1" is one SET, even
// where several statements are refused (a prepared statement).
func firstKeyword(sql string) (string, string) {
	i := 0
	for i < len(sql) {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == '\f' || c == ';':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			if i = commentEnd(sql, i); i < 0 {
				return "", ""
			}
		default:
			j := i
			for j < len(sql) && (sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' || sql[j] == '_') {
				j++
			}
			return strings.ToLower(sql[i:j]), sql[j:]
		}
	}
	return "", ""
}

// explained returns the statement an EXPLAIN's rest explains: past its
// options, in parentheses or as the words ANALYZE, ANALYSE and VERBOSE.
func explained(rest string) string {
	for {
		s := strings.TrimLeft(rest, " \t\n\r\f")
		if strings.HasPrefix(s, "(") {
			j := strings.IndexByte(s, ')')
			if j < 0 {
				return s
			}
			rest = s[j+1:]
			continue
		}
		w, r := firstKeyword(s)
		switch w {
		case "analyze", "analyse", "verbose":
			rest = r
			continue
		}
		return s
	}
}

// commentEnd returns the index just past the block comment that starts at
// sql[i] ("/*"), or -1 when it does not end. PostgreSQL's block comments
// nest: "/* a /* b */ c */" is one comment.
func commentEnd(sql string, i int) int {
	depth := 0
	for i+1 < len(sql) {
		switch {
		case sql[i] == '/' && sql[i+1] == '*':
			depth++
			i += 2
		case sql[i] == '*' && sql[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return -1
}

// intoTemp reports whether sql holds the words INTO TEMP or INTO
// TEMPORARY, LOCAL or GLOBAL allowed between them (SELECT ... INTO TEMP t
// creates a temporary table, which belongs to the session), in any case,
// past comments. A string or a name that reads so is caught too, and only
// costs the statement its sharing.
func intoTemp(sql string) bool {
	// after is what the words just before read: nothing of note, INTO, or
	// INTO LOCAL or INTO GLOBAL.
	const (
		none = iota
		into
		intoScope
	)
	after := none
	for i := 0; i < len(sql); {
		switch {
		case sql[i] == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case sql[i] == '/' && i+1 < len(sql) && sql[i+1] == '*':
			if i = commentEnd(sql, i); i < 0 {
				return false
			}
			continue
		case !isWordByte(sql[i]):
			i++
			continue
		}
		j := i
		for j < len(sql) && isWordByte(sql[j]) {
			j++
		}
		w := sql[i:j]
		switch {
		case after != none && (strings.EqualFold(w, "temp") || strings.EqualFold(w, "temporary")):
			return true
		case after == into && (strings.EqualFold(w, "local") || strings.EqualFold(w, "global")):
			after = intoScope
		case strings.EqualFold(w, "into"):
			after = into
		default:
			after = none
		}
		i = j
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$'
}

// containsFold reports whether s contains sub (lowercase ASCII) in any
// case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// stmtMode is how a statement runs on a shared connection, from its
// QueryExecMode.
type stmtMode uint8

const (
	// modeUnnamed (QueryExecModeExec): unnamed, its arguments in text,
	// their types inferred by the server.
	modeUnnamed stmtMode = iota
	// modeDescribed (CacheDescribe, DescribeExec): as modeUnnamed, unless
	// an argument's Go type does not say its parameter's type
	// (typeMap.describes): then it goes to a whole connection, where pgx
	// describes it and encodes each argument as its parameter's type.
	modeDescribed
	// modeCached (CacheStatement): prepared by name on each shared
	// connection (pipeline_stmt.go).
	modeCached
)

// modeOf is the stmtMode of a statement in pgx's mode m, which is not
// QueryExecModeSimpleProtocol.
func modeOf(m pgx.QueryExecMode) stmtMode {
	switch m {
	case pgx.QueryExecModeCacheStatement:
		return modeCached
	case pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec:
		return modeDescribed
	}
	return modeUnnamed
}

// pipeOptions takes pgx's options off the front of args, as pgx does, and
// reports whether the statement may be pipelined with them: the simple
// protocol, chosen result formats and query rewriters other than pgx's
// named arguments go to a whole connection. rewrite is the named-argument
// rewriter to apply, if any, and mode the statement's QueryExecMode.
func pipeOptions(args []any, mode pgx.QueryExecMode) (rest []any, rewrite pgx.QueryRewriter, _ pgx.QueryExecMode, ok bool) {
	for len(args) > 0 {
		switch a := args[0].(type) {
		case pgx.QueryExecMode:
			mode = a
		case pgx.NamedArgs, pgx.StrictNamedArgs:
			rewrite = a.(pgx.QueryRewriter)
		case pgx.QueryRewriter, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
			return nil, nil, mode, false
		default:
			return args, rewrite, mode, mode != pgx.QueryExecModeSimpleProtocol
		}
		args = args[1:]
	}
	return args, rewrite, mode, mode != pgx.QueryExecModeSimpleProtocol
}

// cacheOff reports whether mode needs a cache that cc turns off (a
// capacity of 0). pgx then fails every statement in that mode, and so does
// a whole connection; such a statement goes to one, so that it fails the
// same when pipelined instead of running unnamed on a shared connection.
func cacheOff(mode pgx.QueryExecMode, cc *pgx.ConnConfig) bool {
	switch mode {
	case pgx.QueryExecModeCacheStatement:
		return cc.StatementCacheCapacity == 0
	case pgx.QueryExecModeCacheDescribe:
		return cc.DescriptionCacheCapacity == 0
	}
	return false
}

// batchOptions is pipeOptions for a query queued in a batch, which pgx's
// SendBatch reads differently: only query rewriters are options there, and
// a QueryExecMode or QueryResultFormats is an ordinary argument, which the
// statement then fails on. Taking those as options would run a batch that
// pgx, and the pool on a whole connection, fail. ok is false for a
// rewriter other than pgx's named arguments.
func batchOptions(args []any) (rest []any, rewrite pgx.QueryRewriter, ok bool) {
	for len(args) > 0 {
		switch a := args[0].(type) {
		case pgx.NamedArgs, pgx.StrictNamedArgs:
			rewrite = a.(pgx.QueryRewriter)
		case pgx.QueryRewriter:
			return nil, nil, false
		default:
			return args, rewrite, true
		}
		args = args[1:]
	}
	return args, rewrite, true
}
