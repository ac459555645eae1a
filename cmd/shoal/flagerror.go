package main

import (
	"errors"
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

// flagError says what was wrong with a command's flags, as a usage error:
// the flag package's own error names the flag with one dash and says
// "parse error". flag.ErrHelp is returned as it is.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if hint := valueHint(fs, err); hint != "" {
		return usagef("%s", hint)
	}
	if text := flagErrorText(fs, err); text != "" {
		return usagef("%s", text)
	}
	return usagef("%v; valid flags: %s", err, validFlags(fs))
}
