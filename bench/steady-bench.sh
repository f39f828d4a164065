#!/bin/bash
# The steady state of a JVM after the probes were started and stopped, against the same JVM before they
# ever were (issue 18: "after start then stop: <= 1.01x, the same as never started"):
#   bench/steady-bench.sh [-n RUNS] [-w WARM] [-a AFTER] [-l LAST] [-s PROBES] [-c wall|cpu|thread] [-0] [WORKLOAD...]
# Each workload of the evaluation kit (default: h2 lucene xalan fop sunflow javac) is run by its own
# run.sh, with its program's work done several times in one JVM by bench/java/Repeat.java
# (bench/java/repeat-java.sh stands in for `java`), the agent loaded with `start=off`:
#   times 1..WARM (default 9)      warm-up; the last five are "before" (never started)
#   time WARM+1                    with the probes on (default: alloc), started just before it
#   times WARM+2..WARM+1+AFTER     after the stop (default AFTER 12); the last LAST (default 5) are "after":
#                                  a long AFTER with a larger LAST reads the state once the JIT has re-warmed
# A JVM is its own control: JVMs of one workload differ from each other by up to 10% throughout (heap
# sizing, JIT decisions), which hides 1% between JVMs, but not between two phases of one JVM. Mode
# `none` runs the same JVM without the switch (every time "never started"): its after/before is the
# drift of a warm JVM over that many times, the noise floor. RUNS runs of each mode (default 3),
# interleaved. Prints per workload the median over the runs of after/before for each mode, the times
# right after the stop against "before" (what re-warming the JIT costs: RetransformClasses gives every
# method of a retransformed class a new identity, without compiled code or profile), and the ratio of
# the two modes' after/before: the cost of having started and stopped, once warm again. Beside it, the
# median "after" time of each mode and their ratio: the same cost read between JVMs, not within one.
# -0 adds JVMs without the agent (mode `noagent`), and the ratio of the started-and-stopped JVMs' "after"
# time to theirs.
# -c picks the clock a time is read on: the process's CPU (default: every thread, the JIT's and GC's too,
# and none of the time the machine gave to other guests, which moved one JVM's wall times by 60% here), wall time,
# or the CPU of the thread doing the work (not the program's other threads: sunflow renders on several).
# STEADY_JAVA_OPTS adds JVM options to both modes (e.g. -Xshare:off); STEADY_JIT=1 logs each JVM's
# compilations beside its log (bench/jit-per-time.sh counts them per time); STEADY_RULES is the rules file
# (default rules/default.yaml); STEADY_DEOPT=K throws every compiled method of every JVM away after its
# Kth time, through HotSpot's testing interface (bench/java/whitebox; -XX:+WhiteBoxAPI in every mode), so
# that the JIT compiles again from the profiles of that moment; STEADY_REREAD=1 prints the tables again
# from the logs of the last run (same options) without running anything. A benchmark, not a test: it
# asserts nothing. Build first: cargo build --release -p instr-agent.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${INSTR_WORKLOADS:-$ROOT/../shared/workloads}
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
N=3; WARM=9; AFTER=12; LAST=5; SWITCH=alloc; CLOCK=cpu; MODES="none startstop"
while getopts "n:w:a:l:s:c:0" o; do
  case $o in n) N=$OPTARG;; w) WARM=$OPTARG;; a) AFTER=$OPTARG;; l) LAST=$OPTARG;; s) SWITCH=$OPTARG;; c) CLOCK=$OPTARG;;
    0) MODES="none startstop noagent";; *) exit 2;; esac
done
case $CLOCK in wall) COLUMN=1;; cpu) COLUMN=2;; thread) COLUMN=3;; *) echo "-c: wall, cpu or thread" >&2; exit 2;; esac
shift $((OPTIND - 1))
NAMES=${*:-h2 lucene xalan fop sunflow javac}
[ -f "$LIB" ] || { echo "build first: cargo build --release -p instr-agent" >&2; exit 2; }
[ "$WARM" -ge 6 ] && [ "$AFTER" -ge 8 ] && [ "$LAST" -ge 1 ] && [ "$LAST" -le $((AFTER - 3)) ] ||
  { echo "-w: at least 6; -a: at least 8; -l: 1 to AFTER - 3" >&2; exit 2; }
TIMES=$((WARM + 1 + AFTER))
OUT=${WL_TMP:-/tmp/instr-steady-bench}; mkdir -p "$OUT/logs" "$OUT/harness"
RULES=${STEADY_RULES:-$ROOT/rules/default.yaml}

fop_cp=$(printf "/usr/share/java/%s.jar:" fop commons-io commons-logging xmlgraphics-commons batik-all xalan2 \
  serializer xercesImpl xml-apis xml-apis-ext fontbox2)
"$JAVA_HOME/bin/javac" -nowarn -d "$OUT/harness" "$ROOT/bench/java/Repeat.java" || exit 2
if [ -n "${STEADY_DEOPT:-}" ]; then
  "$JAVA_HOME/bin/javac" -nowarn -d "$OUT/whitebox" "$ROOT/bench/java/whitebox/jdk/test/whitebox/WhiteBox.java" || exit 2
  STEADY_JAVA_OPTS="${STEADY_JAVA_OPTS:-} -XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI -Xbootclasspath/a:$OUT/whitebox -Drepeat.deoptAt=$STEADY_DEOPT"
fi
if [[ " $NAMES " == *" fop "* ]]; then
  "$JAVA_HOME/bin/javac" -nowarn -d "$OUT/harness" -cp "$fop_cp" "$ROOT/bench/java/FopRender.java" || exit 2
fi

run1() {  # run1 WORKLOAD MODE I -> the times in ms, one line, or nothing on failure
  local log=$OUT/logs/$1-$2-$3.log switch=none
  local agent="-agentpath:$LIB=rules=$RULES,file=$OUT/r-$1-$2-$3,start=off"
  [ "$2" = startstop ] && switch="${SWITCH// /,}@$WARM"
  [ "$2" = noagent ] && agent=""
  [ -n "${STEADY_JIT:-}" ] && agent+=" -Xlog:jit+compilation=debug:file=${log%.log}.jit:uptime"
  if [ -n "${STEADY_REREAD:-}" ]; then :
  elif ! PATH=$JAVA_HOME/bin:$PATH WL_TMP=$OUT/scratch JAVA="$ROOT/bench/java/repeat-java.sh" \
      JAVA_OPTS="$agent ${STEADY_JAVA_OPTS:-}" \
      REPEAT_JAVA=$JAVA_HOME/bin/java REPEAT_N=$TIMES REPEAT_SWITCH=$switch REPEAT_HARNESS=$OUT/harness \
      "$KIT/$1/run.sh" > "$log" 2>&1; then
    echo "FAILED: $1 $2 run $3 (see $log)" >&2; return
  fi
  local times
  # The last TIMES: a workload's script may run the program once more before its measured run (sunflow
  # makes its reference image so, the first time).
  times=$(awk -v c="$COLUMN" '$1 == "repeat:" && $2 ~ /^[0-9]+$/ { print $(2 + c) }' "$log" | tail -n "$TIMES" | tr '\n' ' ')
  [ "$(echo "$times" | wc -w)" -eq "$TIMES" ] || { echo "FAILED: $1 $2 run $3: not $TIMES times (see $log)" >&2; return; }
  echo "$times"
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2 }'; }
# Per run (a line of times): after/before, rewarm/before and after, where before is the median of the last
# five warm times, after that of the last LAST, rewarm that of the three right after the stop.
phases() {
  awk -v w="$WARM" -v last="$LAST" 'function med(from, to,   n, i, j, t, v) { n = 0
      for (i = from; i <= to; i++) v[++n] = $i
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
      return v[int((n + 1) / 2)] }
    { before = med(w - 4, w); after = med(NF - last + 1, NF); rewarm = med(w + 2, w + 4)
      printf "%.4f %.4f %d\n", after / before, rewarm / before, after }'
}

# phase RUNS K: the median over a mode's runs (lines of times) of the Kth figure phases prints per run.
phase() { printf '%s' "$1" | grep . | phases | awk -v k="$2" '{ print $k }' | median; }

echo "# $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1)"
echo "# $TIMES times per JVM, on the $CLOCK clock: $WARM warm, 1 with $SWITCH on, $AFTER after the stop; $N runs per mode;" \
  "JVM options: ${STEADY_JAVA_OPTS:-none}; load before: $(uptime | sed 's/.*load average: //')"
echo "# after/before, medians over the runs (before: times $((WARM - 4))-$WARM; after: the last $LAST)"
printf '%-8s %11s %15s %19s %15s %9s %9s %14s' workload none startstop re-warm/before start+stop/none \
  "none ms" "ss ms" "after: ss/none"
[[ " $MODES " == *" noagent "* ]] && printf ' %11s %18s' "noagent ms" "after: ss/noagent"
echo
ratios=$OUT/ratios; : > "$ratios"
for w in $NAMES; do
  declare -A runs=()
  for i in $(seq 1 "$N"); do
    for m in $MODES; do
      t=$(run1 "$w" "$m" "$i"); [ -n "$t" ] && runs[$m]+="$t"$'\n'
    done
  done
  none=$(phase "${runs[none]:-}" 1); ss=$(phase "${runs[startstop]:-}" 1); rewarm=$(phase "${runs[startstop]:-}" 2)
  none_after=$(phase "${runs[none]:-}" 3); ss_after=$(phase "${runs[startstop]:-}" 3)
  bare_after=$(phase "${runs[noagent]:-}" 3)
  awk -v w="$w" -v n="${none:-0}" -v s="${ss:-0}" -v r="${rewarm:-0}" -v na="${none_after:-0}" \
      -v sa="${ss_after:-0}" -v ba="${bare_after:-0}" 'BEGIN {
    if (n <= 0 || s <= 0 || na <= 0) { printf "%-8s (a mode failed: no ratios)\n", w; exit }
    printf "%-8s %10.3fx %14.3fx %18.3fx %14.3fx %9d %9d %13.3fx", w, n, s, r, s / n, na, sa, sa / na
    if (ba > 0) printf " %11d %17.3fx", ba, sa / ba
    printf "\n"
    print n, s, r, s / n, sa / na, (ba > 0 ? sa / ba : 0) >> "'"$ratios"'" }'
  unset runs
done
awk '{ for (i = 1; i <= 6; i++) if ($i > 0) { g[i] += log($i); k[i]++ } } END { if (NR) {
  printf "%-8s %10.3fx %14.3fx %18.3fx %14.3fx %9s %9s %13.3fx", "geomean", exp(g[1] / k[1]), exp(g[2] / k[2]),
    exp(g[3] / k[3]), exp(g[4] / k[4]), "", "", exp(g[5] / k[5])
  if (k[6]) printf " %11s %17.3fx", "", exp(g[6] / k[6])
  printf "\n" } }' "$ratios"
echo "# load after: $(uptime | sed 's/.*load average: //')"
