#!/bin/bash
# What a start and stop of the probes on one class leaves in a JVM when that class has a lambda
# (bench/java/LambdaLoop.java), with the agent's keep-lambdas on and off:
#   bench/lambda-switch.sh [-n RUNS] [-j JAVA_HOME]
# Each JVM runs LambdaLoop 70 times through bench/java/Repeat.java, the agent loaded with start=off and
# rules selecting LambdaLoop alone; modes: none (never started), on and off (started after time 20 and
# stopped after 21, keep-lambdas=on or off). Prints per JVM the median thread-CPU ms of times 11-20
# (before) and 51-70 (after) and their ratio. A benchmark, not a test: it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=3; JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
while getopts "n:j:" o; do case $o in n) N=$OPTARG;; j) JAVA_HOME=$OPTARG;; *) exit 2;; esac; done
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
[ -f "$LIB" ] || { echo "build first: cargo build --release -p instr-agent" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-lambda-switch}; mkdir -p "$OUT/classes"
"$JAVA_HOME/bin/javac" -nowarn -d "$OUT/classes" bench/java/Repeat.java bench/java/LambdaLoop.java
printf 'probes: [objects, arrays]\nallocations:\n  include: ["LambdaLoop*"]\n' > "$OUT/rules.yaml"
times() {  # times LOG FIRST LAST -> the median thread-CPU ms of those times
  awk -v f="$2" -v l="$3" '$1 == "repeat:" && $2 ~ /^[0-9]+$/ && $2 >= f && $2 <= l { print $5 }' "$1" |
    sort -g | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}
echo "# $(date -u +%F) $(git rev-parse --short HEAD), $("$JAVA_HOME/bin/java" -version 2>&1 | head -1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$N"); do
  for mode in none on off; do
    switch=alloc@20; [ $mode = none ] && switch=none
    keep=on; [ $mode = off ] && keep=off
    "$JAVA_HOME/bin/java" -Xms1g -Xmx1g \
      "-agentpath:$LIB=rules=$OUT/rules.yaml,file=$OUT/r,start=off,keep-lambdas=$keep" \
      -cp "$OUT/classes" Repeat 70 "$switch" LambdaLoop 2> "$OUT/$mode-$i.log" > /dev/null
    b=$(times "$OUT/$mode-$i.log" 11 20); a=$(times "$OUT/$mode-$i.log" 51 70)
    awk -v m="$mode" -v i="$i" -v b="$b" -v a="$a" 'BEGIN { printf "%-5s run %d  before %4.0f ms  after %4.0f ms  after/before %.3f\n", m, i, b, a, a / b }'
  done
done
