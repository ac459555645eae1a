package benchrun

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// grid lays out a text table: the first column (the case's name) to the
// left, the others to the right so that digits line up, unless align says
// otherwise ('l' or 'r' for each column), each as wide as its widest
// cell, with columnGap spaces between.
type grid struct {
	rows  [][]string // the first is the header, if any
	align string
}

const columnGap = 3

func (g *grid) add(cells ...string) { g.rows = append(g.rows, cells) }

func (g *grid) write(w io.Writer) {
	var widths []int
	for _, row := range g.rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range g.rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString(strings.Repeat(" ", columnGap))
			}
			left := i == 0
			if i < len(g.align) {
				left = g.align[i] == 'l'
			}
			if left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// legendWidth is where a legend's lines wrap.
const legendWidth = 100

// writeLegend writes the sentences of a legend under a table, indented
// two spaces and wrapped at legendWidth, so that it reads apart from the
// rows.
func writeLegend(w io.Writer, sentences ...string) {
	line := "  "
	for _, word := range strings.Fields(strings.Join(sentences, " ")) {
		if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > legendWidth && strings.TrimSpace(line) != "" {
			fmt.Fprintln(w, line)
			line = "  "
		}
		if strings.TrimSpace(line) != "" {
			line += " "
		}
		line += word
	}
	if strings.TrimSpace(line) != "" {
		fmt.Fprintln(w, line)
	}
}
