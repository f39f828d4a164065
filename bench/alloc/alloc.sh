#!/bin/bash
# The cost of one counted allocation, per JDK: N alternating JVM runs of AllocCost without the agent, with
# rules/default.yaml at depth 0 (per class) and at depth 1 (per class and static site), then the median of the
# runs' best-round nanoseconds per object, and what the agent adds to each object.
#   bench/alloc/alloc.sh [N] [JAVA_HOME...]   (default: every JDK under /usr/lib/jvm; build first:
#                                              cargo build --release -p instr-agent)
# A benchmark, not a test: it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
N=${1:-5}; shift || true
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
OUT=${TMPDIR:-/tmp}/instr-alloc; mkdir -p "$OUT"
HEAP="-Xms1g -Xmx1g -XX:+AlwaysPreTouch"
. bench/jdks.sh
installed_jdks "$@"
opts() {
  case $1 in
    none) ;;
    depth0) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=0" ;;
    depth1) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p,depth=1" ;;
  esac
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "ns per object, median of $N runs (best round each); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for home in "${HOMES[@]}"; do
  classes=$OUT/$(basename "$home")
  "$home/bin/javac" -d "$classes" bench/alloc/AllocCost.java
  declare -A runs=()
  for _ in $(seq 1 "$N"); do
    for m in none depth0 depth1; do
      # shellcheck disable=SC2046
      runs[$m]+="$("$home/bin/java" $HEAP $(opts "$m") -cp "$classes" alloccost.AllocCost | sed -n 's/^ns_per_object: //p')"$'\n'
    done
  done
  base=$(grep . <<< "${runs[none]}" | median)
  printf '%s\n  %-7s %8s %8s\n' "$("$home/bin/java" -version 2>&1 | head -1)" mode ns added
  for m in none depth0 depth1; do
    v=$(grep . <<< "${runs[$m]}" | median)
    awk -v m="$m" -v v="$v" -v b="$base" 'BEGIN { printf "  %-7s %8.2f %8.2f\n", m, v, v - b }'
  done
  unset runs
  rm -f "$OUT"/r-*
done
