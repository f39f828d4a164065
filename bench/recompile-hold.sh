#!/bin/bash
# What a start and stop leave in a caller the stop did not redefine, whose compiled code inlines a method
# the stop did (bench/java/ProfiledCallee.java), with C2 held back after the stop and without
# (agent/src/recompile_hold.rs):
#   bench/recompile-hold.sh [-n RUNS] [-j JAVA_HOME]
# Each JVM runs ProfiledCallee 70 times through bench/java/Repeat.java, the agent loaded with start=off and
# rules selecting ProfiledCallee's classes; modes: none (never started), hold (started after time 20 and
# stopped after 21, with the default recompile-hold) and nohold (the same with recompile-hold=0). Prints
# per JVM the median thread-CPU ms of times 11-20 (before) and 51-70 (after) and their ratio. A
# benchmark, not a test: it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=3; JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
while getopts "n:j:" o; do case $o in n) N=$OPTARG;; j) JAVA_HOME=$OPTARG;; *) exit 2;; esac; done
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
[ -f "$LIB" ] || { echo "build first: cargo build --release -p instr-agent" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-recompile-hold}; mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" -nowarn -d "$OUT/classes" bench/java/Repeat.java bench/java/ProfiledCallee.java
printf 'probes: [objects, arrays]\nallocations:\n  include: ["ProfiledCallee*"]\n' > "$OUT/rules.yaml"
times() {  # times LOG FIRST LAST -> the median thread-CPU ms of those times
  awk -v f="$2" -v l="$3" '$1 == "repeat:" && $2 ~ /^[0-9]+$/ && $2 >= f && $2 <= l { print $5 }' "$1" |
    sort -g | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}
echo "# $(date -u +%F) $(git rev-parse --short HEAD), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$N"); do
  for mode in none hold nohold; do
    switch=alloc@20; [ $mode = none ] && switch=none
    hold=""; [ $mode = nohold ] && hold=",recompile-hold=0"
    "$JAVA_HOME/bin/java" -Xms1g -Xmx1g \
      "-agentpath:$LIB=rules=$OUT/rules.yaml,file=$OUT/r,start=off$hold" \
      -cp "$OUT/classes" Repeat 70 "$switch" ProfiledCallee 2> "$OUT/$mode-$i.log" > /dev/null
    b=$(times "$OUT/$mode-$i.log" 11 20); a=$(times "$OUT/$mode-$i.log" 51 70)
    awk -v m="$mode" -v i="$i" -v b="$b" -v a="$a" 'BEGIN { printf "%-6s run %d  before %4.0f ms  after %4.0f ms  after/before %.3f\n", m, i, b, a, a / b }'
  done
done
