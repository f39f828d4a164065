#!/bin/bash
# The cost of a counted call: N alternating JVM runs of CallCost without the agent, with calls=counts and
# with calls=times (method probes on package callcost only), then the median ns per call of each shape.
#   bench/calls/calls.sh [N] [MODES]     (build first: cargo build --release -p instr-agent)
# It is a benchmark, not a test: it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-3}; MODES=${2:-"none counts times"}
# A fixed, pre-touched heap: otherwise first-touch page faults, which depend on how G1 sizes the young
# generation, cost more than the calls being measured.
HEAP="-Xms1g -Xmx1g -XX:+AlwaysPreTouch"
OUT=${TMPDIR:-/tmp}/instr-calls; mkdir -p "$OUT"
LIB=${INSTR_LIB:-$PWD/target/release/libinstr.so}
javac -d "$OUT" bench/calls/CallCost.java
printf 'probes: [methods]\nmethods:\n  include: ["callcost.**"]\n' > "$OUT/rules.yaml"
opts() { [ "$1" = none ] || echo "-agentpath:$LIB=rules=$OUT/rules.yaml,file=$OUT/r-$1,calls=$1"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A runs
for i in $(seq 1 "$N"); do
  for m in $MODES; do
    runs[$m]+="$(java $HEAP $(opts "$m") -cp "$OUT" callcost.CallCost)"$'\n'
  done
done
printf '%-8s %10s %10s %10s   (median ns per instrumented call, best round of each run)\n' mode fib vec shape
for m in $MODES; do
  printf '%-8s' "$m"
  for shape in fib vec shape; do
    printf ' %10s' "$(sed -n "s/^${shape}_ns_per_call: //p" <<< "${runs[$m]}" | median)"
  done
  echo
done
