package shoaldebug

import (
	"fmt"
	"html/template"
	"time"
)

// pageTemplate draws the page. Its "pools" part is also served alone, for
// the inline script that refreshes the page without reloading it (a meta
// refresh would lose the reader's scroll position and open stacks); with
// scripts off, the noscript meta refresh does the reloading.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct": func(n, of int64) float64 {
		if of == 0 {
			return 0
		}
		return float64(n) * 100 / float64(of)
	},
	"dur":   roundDuration,
	"clock": func(t time.Time) string { return t.Format("15:04:05") },
	"mean": func(total time.Duration, n int64) string {
		if n == 0 {
			return "–"
		}
		return roundDuration(total / time.Duration(n))
	},
}).Parse(pageHTML))

// roundDuration writes d with three significant digits or so: the page is
// read at a glance.
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond).String()
	}
	return fmt.Sprint(d)
}

const pageHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>shoal pools</title>
<noscript><meta http-equiv="refresh" content="2"></noscript>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .2em; }
h2 { font-size: 1.15em; margin: 0 0 .5em; font-family: ui-monospace, monospace; }
.pool { border: 1px solid #ccc; border-radius: 6px; padding: 1em; margin: 1em 0; max-width: 60em; }
table { border-collapse: collapse; margin: .3em 0 .8em; }
th, td { padding: .15em .7em; text-align: right; }
th { font-weight: normal; color: #666; font-size: .9em; }
td { font-variant-numeric: tabular-nums; font-size: 1.1em; }
.waits td { font-size: 1em; text-align: left; }
.waits td.n { text-align: right; }
.holders td, .holders th { text-align: left; font-size: 1em; }
.holders td.n { text-align: right; }
.bar { width: 20em; }
.bar span { display: block; height: .9em; background: #4a7bb7; min-width: 2px; }
.err { color: #a00; }
pre { background: #f5f5f5; padding: .5em; overflow-x: auto; font-size: .85em; }
.note { color: #666; }
</style></head>
<body>
<h1>shoal pools</h1>
<div id="pools">{{template "pools" .}}</div>
<script>
setInterval(async () => {
  try {
    const r = await fetch(location.pathname + "?fragment=1", {cache: "no-store"});
    if (r.ok) document.getElementById("pools").innerHTML = await r.text();
  } catch (e) {}
}, 1000);
</script>
</body></html>
{{define "pools"}}<p class="note">At <span id="at">{{clock .At}}</span>, refreshed every second<noscript> (every two seconds with scripts off)</noscript>. <a href="?format=json">JSON</a></p>
{{range .Budgets}}<section class="pool" data-budget="{{.Name}}">
<h2>budget {{.Name}}</h2>
<table class="gauges"><tr><th>size</th><th>permits out</th><th>pools</th></tr>
<tr><td data-k="size">{{.Stats.Size}}</td><td data-k="inuse">{{.Stats.InUse}}</td><td data-k="pools">{{len .Stats.Members}}</td></tr></table>
{{if .Stats.Members}}<table class="members">
<tr><th>pool</th><th>min</th><th>demand</th><th>share</th><th>holds</th></tr>
{{range .Stats.Members}}<tr data-member="{{.Name}}"><td>{{.Name}}</td><td data-k="min">{{.Min}}</td><td data-k="demand">{{.Demand}}</td><td data-k="share">{{.Share}}</td><td data-k="held">{{.Held}}</td></tr>
{{end}}</table>{{end}}
</section>
{{end}}{{if not .Pools}}<p>No pools registered.</p>{{end}}
{{range .Pools}}<section class="pool" data-pool="{{.Name}}">
<h2>{{.Name}}</h2>
<table class="gauges">
<tr><th>open</th><th>idle</th><th>in use</th><th>waiting</th><th>dialing</th><th>max conns</th>{{if .Budgeted}}<th>budget share</th><th>demand</th><th>budget members</th>{{end}}</tr>
<tr><td data-k="open">{{.Stats.TotalConns}}</td><td data-k="idle">{{.Stats.IdleConns}}</td><td data-k="inuse">{{.Stats.InUseConns}}</td><td data-k="waiting">{{.Stats.Waiting}}</td><td data-k="dialing">{{.Stats.Dialing}}</td><td data-k="max">{{.Stats.MaxConns}}</td>{{if .Budgeted}}<td data-k="share">{{.Stats.Share}}</td><td data-k="demand">{{.Stats.Demand}}</td><td data-k="members">{{.Stats.BudgetMembers}}</td>{{end}}</tr>
</table>
<table class="counters">
<tr><th>acquires</th><th>waited</th><th>mean wait</th><th>canceled</th><th>rejected</th><th>dials</th><th>dial errors</th><th>closed</th><th>leaked</th><th>barge misses</th></tr>
<tr><td data-k="acquires">{{.Stats.Acquires}}</td><td data-k="waited">{{.Stats.WaitedAcquires}}</td><td data-k="meanwait">{{mean .Stats.WaitTime .Stats.WaitedAcquires}}</td><td data-k="canceled">{{.Stats.CanceledAcquires}}</td><td data-k="rejected">{{.Stats.RejectedAcquires}}</td><td data-k="dials">{{.Stats.Dials}}</td><td data-k="dialerrors">{{.Stats.DialErrors}}</td><td data-k="closed">{{.Stats.Closed}}</td><td data-k="leaked">{{.Stats.Leaked}}</td><td data-k="bargemisses">{{.Stats.BargeMisses}}</td></tr>
</table>
{{with .LastDialError}}<p class="err" data-k="lastdialerror">Last dial error, at {{clock .At}}: <code>{{.Error}}</code></p>{{end}}
{{if .Observed}}{{$max := .MaxWaitCount}}<table class="waits" data-k="waits">
<tr><th>acquire wait</th><th></th><th>acquires</th></tr>
{{range .Waits}}<tr><td>{{.Label}}</td><td class="bar">{{if .Count}}<span style="width: {{pct .Count $max}}%"></span>{{end}}</td><td class="n" data-k="waitcount">{{.Count}}</td></tr>
{{end}}</table>
{{if .Holders}}<table class="holders" data-k="holders">
<tr><th>lease held for</th><th>acquired by</th></tr>
{{range .Holders}}<tr><td class="n" data-k="heldfor">{{dur .Held}}</td><td><code data-k="heldby">{{.AcquiredBy}}</code></td></tr>
{{end}}</table>
{{end}}{{range .Leaks}}<details class="leak" open><summary><b>Leak</b>: held {{dur .Held}} by <code data-k="leakfunc">{{.Function}}</code>{{if .Reclaimed}}, reclaimed{{end}} (reported at {{clock .At}})</summary><pre data-k="leakstack">{{.Stack}}</pre></details>
{{end}}{{else}}<p class="note">Registered without a shoaldebug Observer: no wait histogram, dial error or leak stacks.</p>{{end}}
</section>
{{end}}{{end}}`
