#!/bin/bash
# The agent's overhead on the evaluation kit's real workloads, beside JFR, in one run:
#   bench/agent-bench.sh [-n RUNS] [-m MODES] [-c] [WORKLOAD...]
# For each workload (default: all of ../shared/workloads) and each mode, RUNS runs interleaved with RUNS
# runs without any agent; prints the median wall seconds, the ratio to no agent, and the geometric mean
# of the ratios per mode. Modes (default "empty count depth1 live live1 jfr"; "depth8" walks a stack per
# allocation and takes minutes per workload):
#   empty   agent loaded, rules select nothing (rules/empty.yaml)
#   count   rules/default.yaml, depth 0: exact per-class and per-array-site counts
#   depth1  rules/default.yaml, depth 1: plus every object's static allocation site (no stack walk)
#   depth8  rules/default.yaml, depth 8
#   live    rules/default.yaml, depth 0, live objects sampled 1 in 100 per class
#   live1   rules/default.yaml, depth 1, live objects sampled 1 in 100 per site
#   monitors  agent loaded, no allocation probes (rules/empty.yaml); the thread and monitor profiler on:
#           thread start/end and CPU time, contended enter/entered and wait/waited (MONITOR TIME)
#   jfr     no agent; -XX:StartFlightRecording with settings=profile (allocation sampling on)
# Build first: cargo build --release -p instr-agent. It is a benchmark, not a test: it asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${INSTR_WORKLOADS:-$ROOT/../shared/workloads}
LIB=$ROOT/target/release/libinstr.so
N=3; MODES="empty count depth1 live live1 jfr"; CPU=
while getopts "n:m:c" o; do case $o in n) N=$OPTARG;; m) MODES=$OPTARG;; c) CPU=1;; *) exit 2;; esac; done
shift $((OPTIND - 1))
NAMES=${*:-h2 lucene xalan fop sunflow javac}
[ -f "$LIB" ] || { echo "missing $LIB: cargo build --release -p instr-agent" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-agent-bench}; mkdir -p "$OUT/logs"
opts() {
  case $1 in
    none)   echo "" ;;
    empty)  echo "-agentpath:$LIB=rules=$ROOT/rules/empty.yaml,file=$OUT/r-%p" ;;
    count)  echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0" ;;
    depth1) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1" ;;
    depth8) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=8" ;;
    live)   echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0,live=100" ;;
    live1)  echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1,live=100" ;;
    monitors) echo "-agentpath:$LIB=rules=$ROOT/rules/empty.yaml,file=$OUT/r-%p,threads=on,monitors=on" ;;
    jfr)    echo "-XX:StartFlightRecording=filename=$OUT/r.jfr,settings=profile" ;;
  esac
}
run1() {  # run1 WORKLOAD MODE I -> seconds, or nothing on failure
  local log=$OUT/logs/$1-$2-$3.log rc=0 TIMEFORMAT='%U %S'
  { time WL_TMP=$OUT/scratch JAVA_OPTS="$(opts "$2")" "$KIT/$1/run.sh" > "$log" 2>&1 || rc=$?; } 2> "$log.cpu"
  if [ "$rc" -ne 0 ]; then echo "FAILED: $1 $2 run $3 (see $log)" >&2
  elif [ -n "$CPU" ]; then awk '{ printf "%.2f\n", $1 + $2 }' "$log.cpu"
  else sed -n 's/^wall_seconds: //p' "$log" | tail -1; fi
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else printf "%.2f", (a[NR/2]+a[NR/2+1])/2}'; }
echo "java: $(java -version 2>&1 | head -1); runs: $N; modes: $MODES; metric: $([ -n "$CPU" ] && echo cpu || echo wall) seconds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %8s' workload none_s; for m in $MODES; do printf ' %9s %6s' "${m}_s" ratio; done; echo
declare -A logsum count
for w in $NAMES; do
  declare -A times=()
  for i in $(seq 1 "$N"); do
    for m in none $MODES; do times[$m]+="$(run1 "$w" "$m" "$i") "; done
  done
  base=$(echo ${times[none]} | tr ' ' '\n' | grep . | median)
  printf '%-9s %8s' "$w" "$base"
  for m in $MODES; do
    t=$(echo ${times[$m]} | tr ' ' '\n' | grep . | median)
    r=$(awk -v b="$base" -v t="$t" 'BEGIN{ if (b+0 > 0 && t+0 > 0) printf "%.3f", t/b; else print "-" }')
    printf ' %9s %6s' "$t" "$r"
    if [ "$r" != - ]; then
      logsum[$m]=$(awk -v s="${logsum[$m]:-0}" -v r="$r" 'BEGIN{ printf "%.6f", s + log(r) }')
      count[$m]=$(( ${count[$m]:-0} + 1 ))
    fi
  done
  echo
  unset times
done
printf '%-9s %8s' geomean ""
for m in $MODES; do
  g=$(awk -v s="${logsum[$m]:-0}" -v c="${count[$m]:-0}" 'BEGIN{ if (c > 0) printf "%.3f", exp(s / c); else print "-" }')
  printf ' %9s %6s' "" "$g"
done
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
