package benchrun

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// progressTick is how often the progress bar redraws.
const progressTick = 200 * time.Millisecond

// progressWidth is the bar's width in characters.
const progressWidth = 20

// progressLineWidth is the most columns a drawing of the bar takes, its
// step's label cut to fit: a line that wraps on an 80-column terminal
// leaves its first row behind at every redraw, since "\r" returns to the
// start of the last row only.
const progressLineWidth = 79

// Progress draws a progress bar with the time left on a terminal. A nil
// *Progress, or one made for a writer that is not a terminal, draws nothing.
// Its methods are safe for concurrent use.
type Progress struct {
	w     io.Writer
	total time.Duration // planned time of the whole run

	mu      sync.Mutex
	done    time.Duration // planned time of the steps finished
	step    time.Duration // planned time of the current step
	started time.Time     // when the current step started
	label   string
	drawn   bool

	stop    chan struct{}
	stopped chan struct{}
}

// IsTerminal reports whether f is a character device (a terminal, not a
// file or a pipe).
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// NewProgress returns a progress bar for a run planned to last total, drawn
// on f if f is a terminal; otherwise it returns nil, which draws nothing.
func NewProgress(f *os.File, total time.Duration) *Progress {
	if f == nil || !IsTerminal(f) {
		return nil
	}
	p := &Progress{w: f, total: max(total, time.Second), stop: make(chan struct{}), stopped: make(chan struct{})}
	go p.loop()
	return p
}

func (p *Progress) loop() {
	defer close(p.stopped)
	t := time.NewTicker(progressTick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.drawLocked()
			p.mu.Unlock()
		}
	}
}

// Begin marks the start of a step planned to take planned.
func (p *Progress) Begin(label string, planned time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label, p.step, p.started = label, planned, time.Now()
	p.drawLocked()
}

// End marks the end of the current step.
func (p *Progress) End() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += p.step
	p.step = 0
}

// Pause clears the bar and holds it off while f prints to the same
// terminal, then draws it again.
func (p *Progress) Pause(f func()) {
	if p == nil {
		f()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	f()
	p.drawLocked()
}

// Stop clears the bar for good.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.stop)
	<-p.stopped
	p.mu.Lock()
	p.clearLocked()
	p.mu.Unlock()
}

func (p *Progress) clearLocked() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

func (p *Progress) drawLocked() {
	inStep := min(time.Since(p.started), p.step)
	elapsed := min(p.done+inStep, p.total)
	frac := float64(elapsed) / float64(p.total)
	filled := int(frac * progressWidth)
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", progressWidth-filled)
	left := (p.total - elapsed).Round(time.Second)
	line := fmt.Sprintf("[%s] %3.0f%%  %s left  ", bar, frac*100, left)
	fmt.Fprintf(p.w, "\r\033[K%s%s", line, cutLabel(p.label, progressLineWidth-utf8.RuneCountInString(line)))
	p.drawn = true
}

// cutLabel returns label cut to at most width runes, an ellipsis in the
// last one when it is cut.
func cutLabel(label string, width int) string {
	if utf8.RuneCountInString(label) <= width {
		return label
	}
	if width < 1 {
		return ""
	}
	return string([]rune(label)[:width-1]) + "…"
}
