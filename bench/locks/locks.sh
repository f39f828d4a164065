#!/bin/bash
# Uncontended synchronized with and without the thread profiler (monitors=on): N alternating JVM runs of
# UncontendedLocks (best of 7 rounds of 20M enter/exit each), then the median ns per lock of each side.
#   bench/locks/locks.sh [N]     (build first: cargo build --release -p instr-agent)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-5}; OUT=${TMPDIR:-/tmp}/instr-locks; mkdir -p "$OUT"
LIB=$PWD/target/release/libinstr.so
javac -d "$OUT" bench/locks/UncontendedLocks.java
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
off=(); on=()
for i in $(seq 1 "$N"); do
  off+=("$(java -cp "$OUT" UncontendedLocks | sed -n 's/ns_per_lock: \([0-9.]*\).*/\1/p')")
  on+=("$(java "-agentpath:$LIB=rules=$PWD/rules/empty.yaml,file=$OUT/r-%p,monitors=on" -cp "$OUT" UncontendedLocks | sed -n 's/ns_per_lock: \([0-9.]*\).*/\1/p')")
done
a=$(printf '%s\n' "${off[@]}" | median); b=$(printf '%s\n' "${on[@]}" | median)
echo "no agent:        ${off[*]} -> median $a ns/lock"
echo "monitors=on:     ${on[*]} -> median $b ns/lock"
awk -v a="$a" -v b="$b" 'BEGIN { printf "ratio: %.3f\n", b / a }'
