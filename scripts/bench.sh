#!/usr/bin/env bash
# Runs the peer benchmarks of bench/core (shoal, puddle, database/sql, vitess
# smartconnpool, a buffered channel) and regenerates the generated regions of
# BENCHMARKS.md.
#
#   scripts/bench.sh                      # 6 rounds of 200ms per benchmark: about 4 minutes on a
#                                         # quiet 2-core machine, 8 under heavy load from others
#   BENCH_COUNT=3 scripts/bench.sh        # fewer rounds
#
# Environment:
#   BENCH_COUNT     rounds (benchstat's samples per benchmark); default 6
#   BENCH_TIME      -benchtime of each benchmark in each round; default 200ms
#   BENCH_FILTER    -bench regexp; default . (everything)
#   BENCH_SKIP_RUN  1: run nothing, only redo BENCHMARKS.md's regions from what
#                   bench/results/ holds (without core.txt, the core's region
#                   is kept as it is)
#   BENCHSTAT       benchstat command; default the installed one, else go run
#
# The test binary is built once and run BENCH_COUNT times with -count=1,
# rather than once with -count=N: go test repeats each sub-benchmark N times
# back to back, so a noisy minute on this shared machine would land on one
# pool; interleaved rounds spread it over all of them. The work spin is
# calibrated once and handed to every round, so all rounds do the same work.
#
# BENCHMARKS.md is written by hand, by topic, around regions this script
# writes, each between two marker lines:
#
#   <!-- BEGIN generated: NAME (a note for the reader) -->
#   <!-- END generated: NAME -->
#
# NAME "core" is bench/core's tables, from this run (bench/results/core.txt);
# NAME "results/X.md" is the fragment another benchmark left in
# bench/results/X.md (go run ./pgx -out results/pgx.md, from bench/); NAME
# "other" takes, in name order, the fragments in bench/results/ that no
# region names. A region whose source is absent keeps what it holds, and
# everything outside the regions is kept as it is. bench/results/ is not
# committed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

count=${BENCH_COUNT:-6}
benchtime=${BENCH_TIME:-200ms}
filter=${BENCH_FILTER:-.}
results=$root/bench/results
raw=$results/core.txt
mkdir -p "$results"

step() { printf '==> %s\n' "$*" >&2; }

# describe prints the machine line and what tree is being measured.
describe() {
	local cpu tree dirty
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	echo "# machine: $(uname -srm), ${cpu:-unknown CPU}, $(nproc) CPUs, $(go version | cut -d' ' -f3-), $(date -u '+%Y-%m-%d %H:%M UTC')"
	tree="commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
	dirty=$(git status --porcelain --untracked-files=no -- . ':(exclude)bench' ':(exclude)BENCHMARKS.md' ':(exclude)scripts/bench.sh' 2>/dev/null | wc -l)
	if [ "$dirty" -gt 0 ]; then
		tree="$tree, with uncommitted changes to $dirty file(s) (bench/ measures the working tree)"
	fi
	echo "# tree: $tree"
}

if [ "${BENCH_SKIP_RUN:-}" != 1 ]; then
	step "building the core benchmarks"
	# -mod=mod: other engineers add requirements to bench/go.mod; let the
	# build fill in go.sum entries instead of failing, never drop anything.
	(cd bench && GOWORK=off go test -mod=mod -c -o "$results/core.test" ./core)
	spins=$("$results/core.test" -test.run '^$' | sed -n 's/^# work: .* = \([0-9][0-9]*\) spin iterations$/\1/p')
	[ -n "$spins" ] || { echo "bench.sh: could not calibrate the work spin" >&2; exit 1; }
	export SHOAL_BENCH_WORK_SPINS=$spins
	describe >"$raw"
	# The load average around the run says how much to trust absolute times.
	echo "# load-before: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
	# What produced the file, so that BENCH_SKIP_RUN=1 describes it right.
	{
		echo "# bench-count: $count"
		echo "# bench-time: $benchtime"
		echo "# bench-filter: $filter"
	} >>"$raw"
	started=$(date +%s)
	for round in $(seq 1 "$count"); do
		step "round $round of $count (-benchtime $benchtime)"
		(cd bench/core && "$results/core.test" -test.run '^$' -test.bench "$filter" \
			-test.benchtime "$benchtime" -test.count 1 -test.timeout 30m) >>"$raw"
	done
	echo "# load-after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
	echo "# duration: $(($(date +%s) - started))s" >>"$raw"
fi
if [ ! -s "$raw" ]; then
	[ "${BENCH_SKIP_RUN:-}" = 1 ] || { echo "bench.sh: $raw is empty" >&2; exit 1; }
	step "no $raw: keeping the core's region, placing bench/results/*.md only"
fi

benchstat=()
if [ -n "${BENCHSTAT:-}" ]; then
	read -r -a benchstat <<<"$BENCHSTAT"
elif command -v benchstat >/dev/null; then
	benchstat=(benchstat)
elif [ -x "$(go env GOPATH)/bin/benchstat" ]; then
	benchstat=("$(go env GOPATH)/bin/benchstat")
else
	benchstat=(go run golang.org/x/perf/cmd/benchstat@latest)
fi
stat() { "${benchstat[@]}" "$@" "$raw"; }
block() { printf '```\n'; cat; printf '```\n\n'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The core's region: bench/core's tables, from $raw.
core_md=$tmp/core.md
if [ -s "$raw" ]; then
	note() { grep -m1 "^# $1: " "$raw" | sed "s/^# $1: //" || true; }
	machine=$(note machine)
	tree=$(note tree)
	if [ -z "$machine" ]; then # a file from before these notes: describe now
		machine=$(describe | sed -n 's/^# machine: //p')
		tree="unknown"
	fi
	spins_line=$(note work)
	recorded=$(note bench-count) && count=${recorded:-$count}
	recorded=$(note bench-time) && benchtime=${recorded:-$benchtime}
	recorded=$(note bench-filter) && filter=${recorded:-$filter}
	if [ -n "$(note load-before)" ]; then
		load_line="1-, 5- and 15-minute load average $(note load-before) before the run and $(note load-after) after it; the rounds took $(note duration)"
	else
		load_line="not recorded"
	fi
	{
		cat <<HEADER
- Machine: $machine
- Load: $load_line
- Measured: $tree
- Command: \`BENCH_COUNT=$count BENCH_TIME=$benchtime BENCH_FILTER='$filter' scripts/bench.sh\`, which builds
  \`go test -c ./core\` in bench/ and runs it $count times as
  \`core.test -test.run '^\$' -test.bench '$filter' -test.benchtime $benchtime -test.count 1\`,
  then \`benchstat -col /pool\` over the $count rounds.
- Work in the *work scenarios: $spins_line, spun while the lease is held.

The machine is shared with other builds, so absolute times wander from run to
run; compare pools within one run, by the ratios. Each benchmark is one
acquire plus one release on a pool of 8 connections of a type that does
nothing, all opened before timing starts. \`serial\` is one goroutine; \`parN\`
is N goroutines (RunParallel with SetParallelism); \`parNwork\` holds each lease
for about 2µs of CPU. ns/op and allocs/op come from loops that read no clock;
the acquire-wait percentiles come from a twin benchmark (AcquireWait) that
clocks every acquire into per-goroutine histograms (buckets within 3%), so
its ns/op, not shown, includes two clock reads. Serial runs also report
cpu-ns/op, the CPU time of the benchmark's own thread, which the machine's
other load does not inflate as it does wall time. \`chan\` is a bare buffered
channel that ignores contexts: the floor, not a contender. See
bench/core/bench_test.go for the details.

### Summary

HEADER
		stat -format csv -col /pool -filter '.name:(AcquireRelease OR AcquireWait)' 2>/dev/null |
			(cd bench && GOWORK=off go run -mod=mod ./cmd/ratios)

		echo "### Time per acquire+release"
		echo
		stat -col /pool -filter '.name:AcquireRelease .unit:sec/op' | block
		echo "### Serial: CPU time of the benchmark's own thread per acquire+release"
		echo
		stat -col /pool -filter '.name:AcquireRelease .unit:cpu-ns/op' | block
		echo "### Allocations per acquire+release"
		echo
		stat -col /pool -filter '.name:AcquireRelease .unit:allocs/op' | block
		echo "### Acquire wait: p50, p99, p99.9 (ns)"
		echo
		stat -col /pool -filter '.name:AcquireWait .unit:(p50-ns OR p99-ns OR p99.9-ns)' | block
		echo "### shoal: one partition against the default"
		echo
		stat -col /parts -filter '.name:ShoalPartitions .unit:sec/op' | block
	} >"$core_md"
fi

[ -f BENCHMARKS.md ] || { echo "bench.sh: no BENCHMARKS.md to fill" >&2; exit 1; }
begin_re='^<!-- BEGIN generated: ([^ ]+)'
mapfile -t regions < <(sed -n 's/^<!-- BEGIN generated: \([^ ]*\).*/\1/p' BENCHMARKS.md)
printf '%s\n' "${regions[@]}" | grep -qx core ||
	{ echo "bench.sh: BENCHMARKS.md has no core region (<!-- BEGIN generated: core -->)" >&2; exit 1; }

# The "other" region: the fragments no region names, in name order.
other_md=$tmp/other.md
: >"$other_md"
while IFS= read -r fragment; do
	[ -n "$fragment" ] || continue
	if ! printf '%s\n' "${regions[@]}" | grep -qxF "results/$fragment"; then
		cat "$results/$fragment" >>"$other_md"
		echo >>"$other_md"
	fi
done < <(cd "$results" && LC_ALL=C ls -1 -- *.md 2>/dev/null)

# source prints the file that holds region $1's new content, or nothing to
# keep what the region holds.
source_of() {
	case "$1" in
	core) [ -s "$core_md" ] && echo "$core_md" ;;
	other) [ -s "$other_md" ] && echo "$other_md" ;;
	results/*.md) [ -s "bench/$1" ] && echo "bench/$1" ;;
	esac
	return 0
}

out=$tmp/BENCHMARKS.md
name="" src="" placed=()
while IFS= read -r line || [ -n "$line" ]; do
	if [ -z "$name" ]; then
		printf '%s\n' "$line"
		if [[ $line =~ $begin_re ]]; then
			name=${BASH_REMATCH[1]}
			src=$(source_of "$name")
			if [ -n "$src" ]; then
				printf '\n'
				sed -e '$a\' "$src" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' # the text, without trailing blank lines
				printf '\n'
				placed+=("$name")
			fi
		fi
		continue
	fi
	if [ "$line" = "<!-- END generated: $name -->" ]; then
		printf '%s\n' "$line"
		name="" src=""
	elif [ -z "$src" ]; then
		printf '%s\n' "$line"
	fi
done <BENCHMARKS.md >"$out"
[ -z "$name" ] || { echo "bench.sh: BENCHMARKS.md: region $name has no <!-- END generated: $name --> line" >&2; exit 1; }
mv "$out" BENCHMARKS.md
step "wrote BENCHMARKS.md's regions: ${placed[*]:-none (nothing new)}"
