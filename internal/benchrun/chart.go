package benchrun

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
)

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
	height := chartRowHeight * vg.Length(len(rows))
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
		PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8),
	}
	dc := draw.New(canvas)
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
}

// scenarioPlots returns the throughput and latency plots of a scenario, or
// nil when it measured nothing.
func scenarioPlots(s *ScenarioResult) []*plot.Plot {
	var names []string
	seen := map[string]int{}
	for _, g := range s.Groups {
		for _, r := range g.Results {
			if _, ok := seen[r.Name]; !ok && r.Measured() {
				seen[r.Name] = len(names)
				names = append(names, r.Name)
			}
		}
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
				out = append(out, series{label: g.Title, values: vals, slot: slot})
			}
		}
		return out
	}

	ips := collect(func(r Result) float64 { return r.IPS })
	through := barPlot(s.Name+": throughput", "operations per second", names, ips)
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
	latency := barPlot(s.Name+": latency percentiles", "latency ("+unit.name+")", names, lat)
	return []*plot.Plot{through, latency}
}

// barPlot draws grouped bars: one bar per series for each name.
func barPlot(title, ylabel string, names []string, ss []series) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	n := slots(ss)
	width := math.Min(chartMaxBar, 0.75*chartPlotArea/float64(len(names)*n))
	w := vg.Points(width)
	for i, s := range ss {
		bars, err := plotter.NewBarChart(s.values, w)
		if err != nil {
			continue // only for a non-positive width, which cannot happen
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = w * vg.Length(float64(s.slot)-float64(n-1)/2)
		p.Add(bars)
		if len(ss) > 1 {
			p.Legend.Add(s.label, bars)
		}
	}
	p.Add(plotter.NewGrid())
	p.NominalX(names...)
	p.Y.Tick.Marker = compactTicks{}
	// Room at the sides for the outer bars, and above them for the legend.
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	top := 0.0
	for _, s := range ss {
		for _, v := range s.values {
			top = math.Max(top, v)
		}
	}
	if top > 0 {
		p.Y.Max = top * (1.12 + 0.08*float64(len(ss)))
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

// compactTicks are gonum's default ticks labelled compactly: "2.5 K"
// rather than "2500.00".
type compactTicks struct{}

// Ticks implements plot.Ticker.
func (compactTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = compactLabel(ticks[i].Value)
		}
	}
	return ticks
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
