package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestHelpListsEveryCommand: help, -h and --help print every command, a
// command's own help is there for each, and nothing points at a go doc
// that fails outside cmd/shoal.
func TestHelpListsEveryCommand(t *testing.T) {
	for _, want := range []string{"bench", "sweep", "budget", "version", "help"} {
		found := false
		for _, c := range commands {
			found = found || c.name == want
		}
		if !found {
			t.Errorf("commands lacks %s", want)
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}, {"help", "help"}} {
		r := runShoal(t, args...)
		r.wantCode(t, exitOK)
		for _, c := range commands {
			if !strings.Contains(r.stdout, "\n  "+c.name+" ") {
				t.Errorf("%q does not list %s:\n%s", args, c.name, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "go doc") || !strings.Contains(r.stdout, "go -C cmd/shoal run .") {
			t.Errorf("%q should say how to run shoal from a checkout, not point at go doc:\n%s", args, r.stdout)
		}
	}
	for _, c := range commands {
		r := runShoal(t, "help", c.name)
		r.wantCode(t, exitOK)
		if !strings.Contains(r.stdout, "usage: shoal") {
			t.Errorf("help %s:\n%s", c.name, r.stdout)
		}
	}
	r := runShoal(t, "help", "bench")
	if !strings.Contains(r.stdout, "--rounds") || !strings.Contains(r.stdout, "verdict") {
		t.Errorf("help bench does not name --rounds or the verdict:\n%s", r.stdout)
	}
	r = runShoal(t, "help", "frob")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "bench, sweep, budget, version, help") {
		t.Errorf("help frob: %s", r.stderr)
	}
}

// TestPackageDocListsEveryCommand: the command's go doc lists every
// command in its usage.
func TestPackageDocListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	// The usage block: the indented lines after the line that starts
	// "Usage".
	var usage string
	lines := strings.Split(f.Doc.Text(), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "Usage") {
			continue
		}
		for _, l := range lines[i+2:] {
			if !strings.HasPrefix(l, "\t") {
				break
			}
			usage += l + "\n"
		}
		break
	}
	for _, c := range commands {
		if !strings.Contains(usage, "\tshoal "+c.name) {
			t.Errorf("the package doc's usage lacks shoal %s:\n%s", c.name, usage)
		}
	}
}
