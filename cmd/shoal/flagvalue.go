package main

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// flagValueErr matches the flag package's error for a value of the wrong
// kind: `invalid value "abc" for flag -workers: parse error`, or `invalid
// boolean value "maybe" for -quick: parse error`.
var flagValueErr = regexp.MustCompile(`^invalid (?:boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-([^:]+): (.*)$`)

// valueHint rewrites such an error to name the flag as the help does
// (--workers) and say what it takes. The flag package says "parse error"
// and, passed on as it was, came with the list of valid flags, which the
// flag is already one of. It returns "" for any other error. The hint is
// for the flag the parsing stopped at, which the error names: a later
// argument may be wrong too, but is not what failed.
func valueHint(fs *flag.FlagSet, err error) string {
	m := flagValueErr.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	value, uerr := strconv.Unquote(m[1])
	f := fs.Lookup(m[2])
	if uerr != nil || f == nil {
		return ""
	}
	var want string
	switch f.Value.(flag.Getter).Get().(type) {
	case int:
		want = "want a whole number"
		if strings.HasSuffix(m[3], "value out of range") {
			want = "out of range"
		}
	case bool:
		want = "want true or false (or the flag alone for true)"
	case time.Duration:
		// A bare number (--duration 5) lacks only its unit: the example
		// is the number with one, never a negative one.
		n, perr := strconv.ParseFloat(value, 64)
		switch {
		case perr == nil && n < 0:
			positive := strings.TrimPrefix(value, "-")
			return fmt.Sprintf("--%s %s: a duration is not negative and needs a unit, such as %ss or %sms", f.Name, value, positive, positive)
		case perr == nil:
			return fmt.Sprintf("--%s %s: a duration needs a unit, such as %ss or %sms", f.Name, value, value, value)
		}
		want = "want a duration such as 500ms or 2s"
	default:
		return ""
	}
	return fmt.Sprintf("--%s %q: %s", f.Name, value, want)
}
