// Package mdtable writes the Markdown tables of the bench reports.
package mdtable

import "strings"

// Header writes a table's header row with cols and its alignment row: the
// first column (a label) left-aligned, every other (a figure)
// right-aligned.
func Header(b *strings.Builder, cols ...string) {
	b.WriteString("| ")
	b.WriteString(strings.Join(cols, " | "))
	b.WriteString(" |\n|---|")
	for range len(cols) - 1 {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
}
