package main

import (
	"flag"
	"fmt"
	"regexp"
)

// The flag package's errors for an unknown flag and for a flag at the end
// of the line without its value. They name the flag with one dash
// ("-nope") whatever the user typed.
var (
	unknownFlagErr  = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	missingValueErr = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// flagErrorText rewrites those errors to name the flag as the help and
// the user write it (--nope), an unknown one with the valid flags. It
// returns "" for any other error.
func flagErrorText(fs *flag.FlagSet, err error) string {
	if m := unknownFlagErr.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("unknown flag --%s; valid flags: %s", m[1], validFlags(fs))
	}
	if m := missingValueErr.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	return ""
}
