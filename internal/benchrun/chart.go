package benchrun

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shoalpool/shoal/internal/connstr"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry: one row per scenario, throughput on the left and latency
// percentiles on the right.
const (
	chartWidth     = 13 * vg.Inch
	chartRowHeight = 3.6 * vg.Inch
	chartMaxBar    = 22 // points
	chartPlotArea  = 380.0
	chartPNGDPI    = 110
	// chartTitleHeight is the band above the plots for the chart's title.
	chartTitleHeight = 58 * vg.Inch / 72
)

// drawTitle writes the chart's title at the top of dc: what ran, against
// what, and where and when, so that a chart found later tells how it was
// made. A line too wide for the chart is set smaller until it fits: a
// long target must not run off the edges.
func drawTitle(dc draw.Canvas, r *Report) {
	sty := plot.New().Title.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	x, y := (dc.Min.X+dc.Max.X)/2, dc.Max.Y-vg.Points(4)
	room := dc.Max.X - dc.Min.X - vg.Points(16)
	for i, line := range []string{chartTitle(r), chartTarget(r), chartSubtitle(r)} {
		size := vg.Points(14)
		if i > 0 {
			size = vg.Points(10.5)
		}
		sty.Font.Size = size
		for sty.Width(line) > room && sty.Font.Size > vg.Points(6) {
			sty.Font.Size -= vg.Points(0.5)
		}
		dc.FillText(sty, vg.Point{X: x, Y: y}, line)
		y -= sty.Font.Size + vg.Points(4)
	}
}

// chartTitle is the title's first line: the command and the run's
// length.
func chartTitle(r *Report) string {
	cmd := r.Command
	if cmd == "" {
		cmd = "bench"
	}
	run := "full run"
	if r.Quick {
		run = "--quick run"
	}
	per := ""
	if r.Duration > 0 {
		// Worded as the header over the tables words it.
		per = fmt.Sprintf(": %s measured after %s warm-up per %s", formatSetting(r.Duration), formatSetting(r.Warmup), r.caseWord())
		if r.Rounds > 0 {
			per += fmt.Sprintf(", %d rounds", r.Rounds)
		}
	}
	return fmt.Sprintf("shoal %s, %s%s", cmd, run, per)
}

// chartTarget is the second line: the target, its password masked again
// in case a caller passed it raw.
func chartTarget(r *Report) string {
	target := r.Target
	if rd := connstr.Read(target); rd.URL || rd.Problem == "" {
		target = rd.Mask(target, "REDACTED")
	}
	if target == "" {
		target = "embedded"
	}
	return "against " + target
}

// chartSubtitle is the title's second line: the machine and the date.
func chartSubtitle(r *Report) string {
	m := r.Machine
	parts := []string{}
	if m.CPU != "" {
		parts = append(parts, fmt.Sprintf("%s, %d cores, %s, %s/%s, %s", m.CPU, m.Cores, m.Memory, m.OS, m.Arch, m.GoVersion))
	}
	if !r.Date.IsZero() {
		parts = append(parts, r.Date.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return strings.Join(parts, "; ")
}

// WriteChartFile draws the report's measured results into path; the
// extension (.svg or .png) chooses the format.
func WriteChartFile(path string, r *Report) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".svg" && ext != ".png" {
		return fmt.Errorf("chart %q: the file name must end in .svg or .png", path)
	}
	// Drawn in memory, then written beside path and renamed over it: a
	// chart that cannot be drawn, or a write that fails, leaves whatever
	// was at path as it was.
	var buf bytes.Buffer
	if err := WriteChart(&buf, ext[1:], r); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".shoal-chart-*"+ext)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644) // CreateTemp's 0600 is not what a chart needs
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// WriteChart draws the report's measured results as "svg" or "png" to w.
func WriteChart(w io.Writer, format string, r *Report) error {
	var rows [][]*plot.Plot
	for _, s := range r.Scenarios {
		if row := scenarioPlots(&s); row != nil {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("chart: no scenario produced numbers to draw")
	}
	height := chartRowHeight*vg.Length(len(rows)) + chartTitleHeight
	var canvas vg.CanvasWriterTo
	switch format {
	case "svg":
		canvas = vgsvg.New(chartWidth, height)
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, height), vgimg.UseDPI(chartPNGDPI))}
	default:
		return fmt.Errorf("chart: unknown format %q, want svg or png", format)
	}
	tiles := draw.Tiles{
		Rows: len(rows), Cols: 2,
		PadX: vg.Points(24), PadY: vg.Points(18),
		PadTop: chartTitleHeight + vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8),
	}
	dc := draw.New(canvas)
	drawTitle(dc, r)
	canvases := plot.Align(rows, tiles, dc)
	for i := range rows {
		for j := range rows[i] {
			rows[i][j].Draw(canvases[i][j])
		}
	}
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// series is one bar set: a group's values for each case name. Series with
// the same slot are drawn at the same offset, which is how groups whose
// case names do not overlap share the space under each name.
type series struct {
	label  string
	values plotter.Values
	slot   int
	group  int // the index of its group in the scenario
	// low and high, when set, are the slowest and fastest of a sweep's
	// rounds (Result.RoundIPS), drawn as whiskers: the spread the
	// sweep's verdict rests on.
	low, high []float64
}

// scenarioPlots returns the throughput and latency plots of a scenario, or
// nil when it measured nothing.
func scenarioPlots(s *ScenarioResult) []*plot.Plot {
	names := tableOrder(s)
	seen := map[string]int{}
	for i, n := range names {
		seen[n] = i
	}
	if len(names) == 0 {
		return nil
	}
	// Groups that share case names (a sweep at 8 and at 32 workers) get a
	// bar each under a name; groups with names of their own (HTTP/2 and
	// gRPC) put their bars in the same place.
	shared := sharedNames(s)
	collect := func(f func(Result) float64) []series {
		var out []series
		for gi, g := range s.Groups {
			vals := make(plotter.Values, len(names))
			any := false
			for _, r := range g.Results {
				if i, ok := seen[r.Name]; ok && r.Measured() {
					vals[i] = f(r)
					any = true
				}
			}
			if any {
				slot := 0
				if shared {
					slot = gi
				}
				out = append(out, series{label: g.Title, values: vals, slot: slot, group: gi})
			}
		}
		return out
	}

	ips := collect(func(r Result) float64 { return r.IPS })
	title := s.Name + ": throughput"
	for i := range ips {
		for _, r := range s.Groups[ips[i].group].Results {
			j, ok := seen[r.Name]
			if !ok || len(r.RoundIPS) == 0 || !r.Measured() {
				continue
			}
			if ips[i].low == nil {
				ips[i].low, ips[i].high = make([]float64, len(names)), make([]float64, len(names))
				title = s.Name + ": throughput, mean of the rounds (whiskers: slowest and fastest)"
			}
			ips[i].low[j], ips[i].high[j] = slices.Min(r.RoundIPS), slices.Max(r.RoundIPS)
		}
	}
	through := barPlot(title, "ops/s", names, ips, compactLabel)
	if isSweep(s) {
		through.X.Label.Text = "partitions x connections per partition"
	}

	var maxLat float64
	for _, g := range s.Groups {
		for _, r := range g.Results {
			if r.Measured() {
				maxLat = math.Max(maxLat, float64(r.Latency.P99))
			}
		}
	}
	unit := durationUnits[bestDuration(maxLat)]
	var lat []series
	medians := collect(func(r Result) float64 { return float64(r.Latency.Median) / unit.scale })
	for _, sr := range medians {
		sr.label = "median, " + sr.label
		lat = append(lat, sr)
	}
	for _, sr := range collect(func(r Result) float64 { return float64(r.Latency.P99) / unit.scale }) {
		sr.label = "p99, " + sr.label
		sr.slot += slots(medians)
		lat = append(lat, sr)
	}
	latency := barPlot(s.Name+": latency percentiles", "latency, "+unit.name, names, lat, compactLabel)
	return []*plot.Plot{through, latency}
}

// barPlot draws grouped bars, one per series for each name, on a log
// axis (a pooled case and a connection per request differ by a hundred
// times), each labelled with its value written by format.
func barPlot(title, ylabel string, names []string, ss []series, format func(float64) string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	// Short: gonum shrinks the plot until a rotated label fits beside it.
	p.Y.Label.Text = ylabel + " (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	n := slots(ss)
	width := math.Min(chartMaxBar, 0.75*chartPlotArea/float64(len(names)*n))
	w := vg.Points(width)
	label := p.Title.TextStyle
	label.Font.Size = vg.Points(7)
	low, top := math.Inf(1), 0.0
	for i, s := range ss {
		bars := &logBars{
			values: s.values, low: s.low, high: s.high, width: w, color: plotutil.Color(i), label: label, format: format,
			offset: w * vg.Length(float64(s.slot)-float64(n-1)/2),
		}
		p.Add(bars)
		if len(ss) > 1 {
			p.Legend.Add(s.label, bars)
		}
		for _, vs := range [][]float64{s.values, s.low, s.high} {
			for _, v := range vs {
				if v > 0 {
					low, top = math.Min(low, v), math.Max(top, v)
				}
			}
		}
	}
	p.Add(plotter.NewGrid())
	p.NominalX(names...)
	// Room at the sides for the outer bars; below the lowest bar, so that
	// it shows as a bar; above the highest, for its label and the legend.
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	if top > 0 {
		p.Y.Min = math.Pow(10, math.Floor(math.Log10(low)-0.3))
		p.Y.Max = top * math.Pow(10, 0.35+0.12*float64(len(ss)))
	}
	long := 0
	for _, n := range names {
		long = max(long, len(n))
	}
	if long*len(names) > 70 {
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	return p
}

// tableOrder lists the measured case names of s in the order the tables
// print them: each group's by throughput, fastest first (WriteGroup), the
// first group's names first and later groups' new names after, so that a
// reader finds a bar where the table put its row.
func tableOrder(s *ScenarioResult) []string {
	var names []string
	seen := map[string]bool{}
	for _, g := range s.Groups {
		rs := slices.Clone(g.Results)
		slices.SortStableFunc(rs, func(a, b Result) int { return cmp.Compare(b.IPS, a.IPS) })
		for _, r := range rs {
			if !seen[r.Name] && r.Measured() {
				seen[r.Name] = true
				names = append(names, r.Name)
			}
		}
	}
	return names
}

// isSweep reports whether every measured case of s is a partitions
// configuration, so that its axis can say so.
func isSweep(s *ScenarioResult) bool {
	n := 0
	for _, g := range s.Groups {
		for _, r := range g.Results {
			if !r.Measured() {
				continue
			}
			if r.Pool == nil || r.Pool.Partitions == 0 {
				return false
			}
			n++
		}
	}
	return n > 0
}

// slots counts the distinct offsets of ss.
func slots(ss []series) int {
	n := 0
	for _, s := range ss {
		n = max(n, s.slot+1)
	}
	return max(n, 1)
}

// sharedNames reports whether some case name appears in more than one of
// s's groups.
func sharedNames(s *ScenarioResult) bool {
	seen := map[string]int{}
	for gi, g := range s.Groups {
		for _, r := range g.Results {
			if prev, ok := seen[r.Name]; ok && prev != gi {
				return true
			}
			seen[r.Name] = gi
		}
	}
	return false
}

// compactLabel prints v with at most three significant digits and a K or M
// suffix.
func compactLabel(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + " M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + " K"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
