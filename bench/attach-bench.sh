#!/bin/bash
# The cost of the agent loaded with every probe off, and of a start and stop, on the evaluation kit's
# workloads, and the pause of an attach that retransforms about 5,000 classes:
#   bench/attach-bench.sh [-n RUNS] [-k CLASSES] [-c] [-s "PROBE..."] [-A] [WORKLOAD...]
# Part 1, for each workload (default: h2 lucene xalan fop sunflow javac), RUNS runs of each mode, interleaved:
#   none       no agent
#   again      no agent, a second time: the run's noise floor (an A/A ratio: a ratio closer to 1 than this
#              one's distance from 1 is not resolved by the run)
#   off        -agentpath:libinstr.so=rules/default.yaml,start=off: loaded, no probe in the code
#   startstop  the same, and as soon as the control socket answers: instr ctl PID start alloc, then stop
#              alloc (the default rules' allocation probes into every loaded class and out again; both
#              retransformations are inside the timed run)
# -s names what startstop starts and stops (default: alloc; e.g. -s "alloc live monitors cpu": each started in
# that order, then each stopped); -A leaves out part 2, -n 0 part 1.
# Prints the median wall seconds (-c: CPU seconds, user + system, of the whole run: steadier on a loaded
# machine) and the ratio to none.
# Part 2: bench/java/ManyClasses.java loads CLASSES classes (default 5000) of the runtime image, keeps a
# thread busy, and instr attach loads the agent with the default rules: prints the classes retransformed,
# the agent's time for it, and the JVM's safepoint pauses of RedefineClasses (sum and longest), from
# -Xlog:safepoint. It is a benchmark, not a test: it asserts nothing.
# Build first: cargo build --release -p instr-agent -p instr-cli.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${INSTR_WORKLOADS:-$ROOT/../shared/workloads}
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
INSTR=${INSTR_BIN:-$ROOT/target/release/instr}
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
N=3; CLASSES=5000; CPU=; SWITCH=alloc; ATTACH=1
while getopts "n:k:cs:A" o; do
  case $o in n) N=$OPTARG;; k) CLASSES=$OPTARG;; c) CPU=1;; s) SWITCH=$OPTARG;; A) ATTACH=;; *) exit 2;; esac
done
shift $((OPTIND - 1))
NAMES=${*:-h2 lucene xalan fop sunflow javac}
[ -f "$LIB" ] && [ -x "$INSTR" ] || { echo "build first: cargo build --release -p instr-agent -p instr-cli" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-attach-bench}; mkdir -p "$OUT/logs"
RULES=$ROOT/rules/default.yaml

# startstop's helper: finds the JVM by its report prefix, waits for its socket, starts and stops alloc.
start_and_stop() {  # start_and_stop PREFIX LOG
  local pid=
  for _ in $(seq 1 500); do
    pid=$(pgrep -f "file=$1" | head -1) && [ -n "$pid" ] && [ -S "/tmp/instr-$(id -u)/$pid.sock" ] && break
    pid=; sleep 0.02
  done
  [ -n "$pid" ] || { echo "no JVM with file=$1" >> "$2"; return; }
  local p
  { for p in $SWITCH; do "$INSTR" ctl "$pid" start $p; done
    for p in $SWITCH; do "$INSTR" ctl "$pid" stop $p; done; } >> "$2" 2>&1
}

run1() {  # run1 WORKLOAD MODE I -> wall seconds, or nothing on failure
  local log=$OUT/logs/$1-$2-$3.log prefix=$OUT/r-$1-$2-$3 opts= helper=
  case $2 in
    off|startstop) opts="-agentpath:$LIB=rules=$RULES,file=$prefix,start=off" ;;
  esac
  if [ "$2" = startstop ]; then start_and_stop "$prefix" "$log.ctl" & helper=$!; fi
  local rc=0 TIMEFORMAT='%U %S'
  { time WL_TMP=$OUT/scratch JAVA_OPTS="$opts" "$KIT/$1/run.sh" > "$log" 2>&1 || rc=$?; } 2> "$log.cpu"
  [ "$rc" -eq 0 ] || { echo "FAILED: $1 $2 run $3 (see $log)" >&2; return; }
  [ -n "$helper" ] && wait "$helper"
  if [ "$2" = startstop ] && [ "$(grep -c " off" "$log.ctl" 2>/dev/null)" -lt "$(echo $SWITCH | wc -w)" ]; then
    echo "startstop did not switch in $1 run $3 (see $log.ctl)" >&2
  fi
  if [ -n "$CPU" ]; then awk '{ printf "%.2f\n", $1 + $2 }' "$log.cpu"
  else sed -n 's/^wall_seconds: //p' "$log" | tail -1; fi
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }

echo "# $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1)"
echo "# ${CPU:+CPU seconds, }startstop: $SWITCH; load before: $(uptime | sed 's/.*load average: //')"
printf '%-8s %8s %8s %8s %9s %8s %9s %14s\n' workload none again off startstop again/none off/none start+stop/none
ratios=$OUT/ratios; : > "$ratios"
[ "$N" -gt 0 ] || NAMES=  # -n 0: the attach pause alone
for w in $NAMES; do
  declare -A times=()
  for i in $(seq 1 "$N"); do
    for m in none again off startstop; do times[$m]+="$(run1 "$w" "$m" "$i") "; done
  done
  none=$(echo "${times[none]}" | tr ' ' '\n' | median)
  again=$(echo "${times[again]}" | tr ' ' '\n' | median)
  off=$(echo "${times[off]}" | tr ' ' '\n' | median)
  ss=$(echo "${times[startstop]}" | tr ' ' '\n' | median)
  awk -v w="$w" -v n="$none" -v a="$again" -v o="$off" -v s="$ss" 'BEGIN {
    if (n <= 0 || a <= 0 || o <= 0 || s <= 0) { printf "%-8s (a mode failed: no ratios)\n", w; exit }
    printf "%-8s %8s %8s %8s %9s %9.3fx %8.3fx %13.3fx\n", w, n, a, o, s, a / n, o / n, s / n
    print a / n, o / n, s / n >> "'"$ratios"'" }'
  unset times
done
awk '{ for (i = 1; i <= 3; i++) g[i] += log($i); n++ } END { if (n)
  printf "%-8s %8s %8s %8s %9s %9.3fx %8.3fx %13.3fx\n", "geomean", "", "", "", "", exp(g[1] / n), exp(g[2] / n), exp(g[3] / n) }' "$ratios"

echo "# load after: $(uptime | sed 's/.*load average: //')"
[ -n "$ATTACH" ] || exit 0

# Part 2: the attach pause.
mkdir -p "$OUT/many"
"$JAVA_HOME/bin/javac" -d "$OUT/many" "$ROOT/bench/java/ManyClasses.java" || exit 2
fifo=$OUT/many/in; rm -f "$fifo"; mkfifo "$fifo"
"$JAVA_HOME/bin/java" -Xlog:safepoint=info:file="$OUT/many/safepoints.log" -cp "$OUT/many" ManyClasses "$CLASSES" \
  < "$fifo" > "$OUT/many/out" 2> "$OUT/many/err" &
jvm=$!
exec 9> "$fifo"
for _ in $(seq 1 600); do grep -q ready "$OUT/many/out" && break; sleep 0.1; done
loaded=$(sed -n 's/^ready //p' "$OUT/many/out")
: > "$OUT/many/safepoints.log"
start=$(date +%s%N)
"$INSTR" attach "$jvm" "rules=$RULES,file=$OUT/many/r-%p" > "$OUT/many/attach" 2>&1
took=$(( ($(date +%s%N) - start) / 1000000 ))
exec 9>&-
wait "$jvm"
echo
echo "attach into a JVM with $loaded classes loaded by ManyClasses (plus the JDK's own): instr attach took $took ms"
sed -n 's/^instr: attached; /agent: /p' "$OUT/many/err"
grep -o 'Safepoint "RedefineClasses".*Total: [0-9]* ns' "$OUT/many/safepoints.log" | sed 's/.*Total: \([0-9]*\) ns/\1/' |
  awk '{ n++; s += $1; if ($1 > m) m = $1 } END { printf "RedefineClasses safepoints: %d, total %.0f ms, longest %.0f ms\n", n, s / 1e6, m / 1e6 }'
echo "# load after: $(uptime | sed 's/.*load average: //')"
