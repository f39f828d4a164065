#!/bin/bash
# The steady state of a JVM after the probes were started and stopped, against the same JVM before they
# ever were (issue 18: "after start then stop: <= 1.01x, the same as never started"):
#   bench/steady-bench.sh [-n RUNS] [-w WARM] [-a AFTER] [-s PROBES] [WORKLOAD...]
# Each workload of the evaluation kit (default: h2 lucene xalan fop sunflow javac) is run by its own
# run.sh, with its program's work done several times in one JVM by bench/java/Repeat.java
# (bench/java/repeat-java.sh stands in for `java`), the agent loaded with `start=off`:
#   times 1..WARM (default 7)      warm-up; the last three are "before" (never started)
#   time WARM+1                    with the probes on (default: alloc), started just before it
#   times WARM+2..WARM+1+AFTER     after the stop (default AFTER 10); the last three are "after"
# A JVM is its own control: JVMs of one workload differ from each other by up to 10% throughout (heap
# sizing, JIT decisions), which hides 1% between JVMs, but not between two phases of one JVM. Mode
# `none` runs the same JVM without the switch (every time "never started"): its after/before is the
# drift of a warm JVM over that many times, the noise floor. RUNS runs of each mode (default 3),
# interleaved. Prints per workload the median over the runs of after/before for each mode, the times
# right after the stop against "before" (what re-warming the JIT costs: RetransformClasses gives every
# method of a retransformed class a new identity, without compiled code or profile), and the ratio of
# the two modes' after/before: the cost of having started and stopped, once warm again.
# STEADY_JAVA_OPTS adds JVM options to both modes (e.g. -Xshare:off); STEADY_RULES is the rules file
# (default rules/default.yaml). A benchmark, not a test: it asserts
# nothing. Build first: cargo build --release -p instr-agent.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${INSTR_WORKLOADS:-$ROOT/../shared/workloads}
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
N=3; WARM=7; AFTER=10; SWITCH=alloc
while getopts "n:w:a:s:" o; do
  case $o in n) N=$OPTARG;; w) WARM=$OPTARG;; a) AFTER=$OPTARG;; s) SWITCH=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND - 1))
NAMES=${*:-h2 lucene xalan fop sunflow javac}
[ -f "$LIB" ] || { echo "build first: cargo build --release -p instr-agent" >&2; exit 2; }
[ "$WARM" -ge 4 ] && [ "$AFTER" -ge 4 ] || { echo "-w and -a: at least 4 each" >&2; exit 2; }
TIMES=$((WARM + 1 + AFTER))
OUT=${WL_TMP:-/tmp/instr-steady-bench}; mkdir -p "$OUT/logs" "$OUT/harness"
RULES=${STEADY_RULES:-$ROOT/rules/default.yaml}

fop_cp=$(printf "/usr/share/java/%s.jar:" fop commons-io commons-logging xmlgraphics-commons batik-all xalan2 \
  serializer xercesImpl xml-apis xml-apis-ext fontbox2)
"$JAVA_HOME/bin/javac" -nowarn -d "$OUT/harness" "$ROOT/bench/java/Repeat.java" || exit 2
if [[ " $NAMES " == *" fop "* ]]; then
  "$JAVA_HOME/bin/javac" -nowarn -d "$OUT/harness" -cp "$fop_cp" "$ROOT/bench/java/FopRender.java" || exit 2
fi

run1() {  # run1 WORKLOAD MODE I -> the times in ms, one line, or nothing on failure
  local log=$OUT/logs/$1-$2-$3.log switch=none
  [ "$2" = startstop ] && switch="${SWITCH// /,}@$WARM"
  if ! PATH=$JAVA_HOME/bin:$PATH WL_TMP=$OUT/scratch JAVA="$ROOT/bench/java/repeat-java.sh" \
      JAVA_OPTS="-agentpath:$LIB=rules=$RULES,file=$OUT/r-$1-$2-$3,start=off ${STEADY_JAVA_OPTS:-}" \
      REPEAT_JAVA=$JAVA_HOME/bin/java REPEAT_N=$TIMES REPEAT_SWITCH=$switch REPEAT_HARNESS=$OUT/harness \
      "$KIT/$1/run.sh" > "$log" 2>&1; then
    echo "FAILED: $1 $2 run $3 (see $log)" >&2; return
  fi
  local times
  # The last TIMES: a workload's script may run the program once more before its measured run (sunflow
  # makes its reference image so, the first time).
  times=$(sed -n 's/^repeat: [0-9]* \([0-9]*\).*/\1/p' "$log" | tail -n "$TIMES" | tr '\n' ' ')
  [ "$(echo "$times" | wc -w)" -eq "$TIMES" ] || { echo "FAILED: $1 $2 run $3: not $TIMES times (see $log)" >&2; return; }
  echo "$times"
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# Per run (a line of times): after/before and rewarm/before, where before is the median of times
# WARM-2..WARM, after that of the last three, rewarm that of the three right after the stop.
phases() {
  awk -v w="$WARM" 'function med3(a, b, c) { return a + b + c - (a < b ? (a < c ? a : c) : (b < c ? b : c)) \
      - (a > b ? (a > c ? a : c) : (b > c ? b : c)) }
    { before = med3($(w - 2), $(w - 1), $w); after = med3($(NF - 2), $(NF - 1), $NF)
      rewarm = med3($(w + 2), $(w + 3), $(w + 4)); printf "%.4f %.4f\n", after / before, rewarm / before }'
}

echo "# $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1)"
echo "# $TIMES times per JVM: $WARM warm, 1 with $SWITCH on, $AFTER after the stop; $N runs per mode;" \
  "load before: $(uptime | sed 's/.*load average: //')"
echo "# after/before, medians over the runs (before: times $((WARM - 2))-$WARM; after: the last three)"
printf '%-8s %11s %15s %19s %15s\n' workload none startstop re-warm/before start+stop/none
ratios=$OUT/ratios; : > "$ratios"
for w in $NAMES; do
  declare -A runs=()
  for i in $(seq 1 "$N"); do
    for m in none startstop; do
      t=$(run1 "$w" "$m" "$i"); [ -n "$t" ] && runs[$m]+="$t"$'\n'
    done
  done
  none=$(printf '%s' "${runs[none]:-}" | grep . | phases | awk '{ print $1 }' | median)
  ss=$(printf '%s' "${runs[startstop]:-}" | grep . | phases | awk '{ print $1 }' | median)
  rewarm=$(printf '%s' "${runs[startstop]:-}" | grep . | phases | awk '{ print $2 }' | median)
  awk -v w="$w" -v n="${none:-0}" -v s="${ss:-0}" -v r="${rewarm:-0}" 'BEGIN {
    if (n <= 0 || s <= 0) { printf "%-8s (a mode failed: no ratios)\n", w; exit }
    printf "%-8s %10.3fx %14.3fx %18.3fx %14.3fx\n", w, n, s, r, s / n
    print n, s, r, s / n >> "'"$ratios"'" }'
  unset runs
done
awk '{ for (i = 1; i <= 4; i++) g[i] += log($i); n++ } END { if (n)
  printf "%-8s %10.3fx %14.3fx %18.3fx %14.3fx\n", "geomean", exp(g[1] / n), exp(g[2] / n), exp(g[3] / n),
    exp(g[4] / n) }' "$ratios"
echo "# load after: $(uptime | sed 's/.*load average: //')"
