#!/bin/bash
# The agent's overhead on the evaluation kit's real workloads, beside JFR, in one run:
#   bench/agent-bench.sh [-n RUNS] [-m MODES] [-c] [-j JAVA_HOME]... [-k] [-o JVM_OPTIONS] [WORKLOAD...]
# It runs on every JDK under /usr/lib/jvm (or those given with -j), one table per JDK; -k adds a table for each
# JDK that has -XX:+UseCompactObjectHeaders (JDK 24+) with that flag on in every run, the baseline's too. A
# workload whose run without an agent fails on a JDK is skipped on that JDK, and the table says so.
# For each workload (default: all of ../shared/workloads) and each mode, RUNS runs interleaved with RUNS
# runs without any agent, each round in an order rotated by one; prints the median wall seconds, the ratio
# to no agent, and the geometric mean of the ratios per mode. Modes (default "empty count depth1 live live1
# jfr"; "depth8" walks a stack per allocation and takes minutes per workload):
#   again   no agent, a second time: the run's noise floor (an A/A ratio; a mode's ratio closer to 1 than
#           this one's distance from 1 is not resolved by the run)
#   empty   agent loaded, rules select nothing (rules/empty.yaml)
#   count   rules/default.yaml, depth 0: exact per-class and per-array-site counts
#   depth1  rules/default.yaml, depth 1: plus every object's static allocation site (no stack walk)
#   depth1off  depth1 with early=off: class-data sharing kept, the probes put in at VM_INIT by one
#           retransformation (cds.rs) rather than by the early class hook
#   depth8  rules/default.yaml, depth 8 (a stack walk per allocation)
#   depth8s rules/default.yaml, depth 8, stacks=64k: exact per-site counts split over stacks the heap sampler
#           walked, one per 64 KiB allocated on average
#   live    rules/default.yaml, depth 0, live objects by the JVM's heap sampler (live=512k), per class
#   live100 rules/default.yaml, depth 0, live objects tagged by the probes, 1 in 100 per class
#   live1   rules/default.yaml, depth 1, live objects tagged by the probes, 1 in 100 per site
#   live1k  rules/default.yaml, depth 0, live objects tagged by the probes, 1 in 1000 per class
#   monitors  agent loaded, no allocation probes (rules/empty.yaml); the thread and monitor profiler on:
#           thread start/end and CPU time, contended enter/entered and wait/waited (MONITOR TIME)
#   jfr     no agent; -XX:StartFlightRecording with settings=profile (allocation sampling on)
#   calls   method probes on every method of the workload's own packages (see app_packages), calls=counts
#   times   the same with calls=times (per-thread call trees, CPU and wall time; leaf methods counted only)
#   timesall  calls=times,leaves=timed: leaf methods timed like the others
#   cpu10   the sampler alone, cpu=10ms (AsyncGetCallTrace from per-thread CPU timers; no class rewritten)
#   cpu1    the sampler alone, cpu=1ms
#   cpu10p  cpu=10ms,debug-non-safepoints=on (exact frames in compiled code: HotSpot keeps debug
#           information at every instruction)
#   cpu1p   cpu=1ms,debug-non-safepoints=on
#   callscpu  calls=counts on the workload's own packages plus cpu=1ms (sampled times beside exact counts)
#   jfrexec no agent; JFR's execution sampler alone at 1 ms (bench/jfr-exec-1ms.jfc)
#   jfrcpu  no agent; JFR's CPU-time sampler (JEP 509, JDK 25 only) alone at 1 ms (bench/jfr-cputime-1ms.jfc)
# For calls and times the median number of calls counted (sum of the report's enters) is printed too.
# A/B: a mode name ending in "@b" (e.g. "calls calls@b") runs that mode with the library INSTR_LIB_B instead,
# interleaved with the others, so that two builds are compared in one run. INSTR_OPTS_B adds JVM options to the
# "@b" runs only (INSTR_LIB_B defaults to INSTR_LIB then), e.g. a -XX:CompileCommand to try a JIT decision.
# Any letter works the same way: "depth1@c" reads INSTR_LIB_C and INSTR_OPTS_C.
# -c measures CPU seconds (user + system) instead of wall seconds: steadier on a loaded machine.
# -o adds JVM options to every run, the baseline's too: "-Xms1g -Xmx1g" takes G1's heap sizing out of a comparison
# (a run that tips G1 into growing the heap pays for touching the new memory; bench/README.md, 2026-11-27).
# Build first: cargo build --release -p instr-agent. It is a benchmark, not a test: it asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIT=${INSTR_WORKLOADS:-$ROOT/../shared/workloads}
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
N=3; MODES="empty count depth1 live live1 jfr"; CPU=; HOMES=(); COH=; ALL_OPTS=
while getopts "n:m:cj:ko:" o; do
  case $o in n) N=$OPTARG;; m) MODES=$OPTARG;; c) CPU=1;; j) HOMES+=("$OPTARG");; k) COH=1;; o) ALL_OPTS=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND - 1))
NAMES=${*:-h2 lucene xalan fop sunflow javac}
[ -f "$LIB" ] || { echo "missing $LIB: cargo build --release -p instr-agent" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-agent-bench}; mkdir -p "$OUT/logs"
# The application's own packages in each workload (the jars its run.sh puts first on the class path).
app_packages() {
  case $1 in
    h2)      echo '"org.h2.**"' ;;
    lucene)  echo '"org.apache.lucene.**"' ;;
    xalan)   echo '"org.apache.xalan.**", "org.apache.xpath.**"' ;;
    fop)     echo '"org.apache.fop.**"' ;;
    sunflow) echo '"org.sunflow.**"' ;;
    javac)   echo '"com.sun.tools.javac.**"' ;;
  esac
}
calls_rules() {  # calls_rules WORKLOAD -> path of a rules file selecting its packages' methods
  local f=$OUT/rules-$1.yaml
  printf 'probes: [methods]\nmethods:\n  include: [%s]\n' "$(app_packages "$1")" > "$f"
  echo "$f"
}
opts() {  # opts MODE WORKLOAD RUN
  local LIB=$LIB
  local arm= arm_lib arm_opts
  case $1 in *@?) arm=${1##*@}; arm=${arm^^}; arm_lib=INSTR_LIB_$arm; arm_opts=INSTR_OPTS_$arm
    LIB=${!arm_lib:-${!arm_opts:+$LIB}}
    [ -n "$LIB" ] || { echo "a mode ending in @${1##*@} needs $arm_lib or $arm_opts" >&2; exit 2; }
    echo -n "${!arm_opts:-} " ;;
  esac
  case ${1%@?} in
    calls)  echo "-agentpath:$LIB=rules=$(calls_rules "$2"),file=$OUT/c-$2-$1-$3,calls=counts" ;;
    times)  echo "-agentpath:$LIB=rules=$(calls_rules "$2"),file=$OUT/c-$2-$1-$3,calls=times" ;;
    timesall) echo "-agentpath:$LIB=rules=$(calls_rules "$2"),file=$OUT/c-$2-$1-$3,calls=times,leaves=timed" ;;
    none|again) echo "" ;;
    empty)  echo "-agentpath:$LIB=rules=$ROOT/rules/empty.yaml,file=$OUT/r-%p" ;;
    count)  echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0" ;;
    depth1) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1" ;;
    depth1off) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1,early=off" ;;
    depth8) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=8" ;;
    depth8s) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=8,stacks=64k" ;;
    live)   echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0,live=512k" ;;
    live100) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0,live=100" ;;
    live1k) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0,live=1000" ;;
    live1)  echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1,live=100" ;;
    cpu10)  echo "-agentpath:$LIB=cpu=10ms,file=$OUT/r-%p" ;;
    cpu1)   echo "-agentpath:$LIB=cpu=1ms,file=$OUT/r-%p" ;;
    cpu10p) echo "-agentpath:$LIB=cpu=10ms,debug-non-safepoints=on,file=$OUT/r-%p" ;;
    cpu1p)  echo "-agentpath:$LIB=cpu=1ms,debug-non-safepoints=on,file=$OUT/r-%p" ;;
    callscpu) echo "-agentpath:$LIB=rules=$(calls_rules "$2"),file=$OUT/c-$2-$1-$3,calls=counts,cpu=1ms" ;;
    jfrexec) echo "-XX:StartFlightRecording=filename=$OUT/r.jfr,settings=$ROOT/bench/jfr-exec-1ms.jfc" ;;
    jfrcpu) echo "-XX:StartFlightRecording=filename=$OUT/r.jfr,settings=$ROOT/bench/jfr-cputime-1ms.jfc" ;;
    monitors) echo "-agentpath:$LIB=rules=$ROOT/rules/empty.yaml,file=$OUT/r-%p,threads=on,monitors=on" ;;
    jfr)    echo "-XX:StartFlightRecording=filename=$OUT/r.jfr,settings=profile" ;;
  esac
}
run1() {  # run1 WORKLOAD MODE I -> seconds, or nothing on failure
  local log=$OUT/logs/$JDK_TAG-$1-$2-$3.log rc=0 TIMEFORMAT='%U %S'
  rm -f "$OUT/c-$1-$2-$3.json"
  # The kit compiles its drivers once per scratch directory: one per JDK, so that no JDK runs another's classes.
  { time WL_TMP=$OUT/scratch-$JDK_TAG JAVA_OPTS="$EXTRA_OPTS $(opts "$2" "$1" "$3")" "$KIT/$1/run.sh" > "$log" 2>&1 || rc=$?; } 2> "$log.cpu"
  if [ "$rc" -ne 0 ]; then echo "FAILED: $1 $2 run $3 (see $log)" >&2
  elif [ -n "$CPU" ]; then awk '{ printf "%.2f\n", $1 + $2 }' "$log.cpu"
  else sed -n 's/^wall_seconds: //p' "$log" | tail -1; fi
}
calls_counted() {  # calls_counted WORKLOAD MODE I -> sum of enters in that run's report
  local f=$OUT/c-$1-$2-$3.json
  [ -f "$f" ] && python3 -c 'import json,sys; print(sum(m["enters"] for m in json.load(open(sys.argv[1]))["methods"]))' "$f"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else printf "%.2f", (a[NR/2]+a[NR/2+1])/2}'; }
bench_jdk() {  # bench_jdk: one table, for the java on PATH
  local w m i base t r g first
  declare -A logsum=() count=() ncalls=()
  echo "java: $(java -version 2>&1 | head -1)${EXTRA_OPTS:+ $EXTRA_OPTS}; runs: $N; modes: $MODES; metric: $([ -n "$CPU" ] && echo cpu || echo wall) seconds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-9s %8s' workload none_s; for m in $MODES; do printf ' %9s %6s' "${m}_s" ratio; done; echo
  for w in $NAMES; do
    declare -A times=()
    # A workload that cannot run on this JDK without the agent says so once, and has no row.
    first=$(run1 "$w" none 0)
    if [ -z "$first" ]; then
      echo "$w: skipped, it fails on this JDK without any agent (see $OUT/logs/$JDK_TAG-$w-none-0.log)"
      continue
    fi
    # Each round starts one mode later than the one before, so that no mode always runs right after
    # another (a run right after the baseline's has measured a few percent dearer than the same run later).
    local order=(none $MODES) k
    for i in $(seq 1 "$N"); do
      for k in $(seq 0 $((${#order[@]} - 1))); do
        m=${order[$(( (k + i - 1) % ${#order[@]} ))]}
        times[$m]+="$(run1 "$w" "$m" "$i") "
      done
    done
    for m in $MODES; do
      case ${m%@?} in calls|times|timesall|callscpu)
        ncalls[$w-$m]=$(for i in $(seq 1 "$N"); do calls_counted "$w" "$m" "$i"; done | median) ;;
      esac
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
  for m in $MODES; do
    case ${m%@?} in calls|times|timesall|callscpu)
      printf 'calls counted (%s, median per run):' "$m"
      for w in $NAMES; do printf ' %s=%s' "$w" "${ncalls[$w-$m]:--}"; done; echo ;;
    esac
  done
}
. bench/jdks.sh
installed_jdks ${HOMES[@]+"${HOMES[@]}"}
for home in "${HOMES[@]}"; do
  JDK_TAG=$(basename "$home") EXTRA_OPTS=$ALL_OPTS PATH=$home/bin:$PATH JAVA_HOME=$home bench_jdk
  echo
  if [ -n "$COH" ] && "$home/bin/java" -XX:+UseCompactObjectHeaders -version > /dev/null 2>&1; then
    JDK_TAG=$(basename "$home")-coh EXTRA_OPTS="$ALL_OPTS -XX:+UseCompactObjectHeaders" PATH=$home/bin:$PATH JAVA_HOME=$home bench_jdk
    echo
  fi
done
