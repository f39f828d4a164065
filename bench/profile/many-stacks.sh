#!/usr/bin/env bash
# The agent's exit report on a real run with many distinct stacks (bench/README.md, "2026-11-25: the frame
# table"): a generated program whose x's decimal digits choose, level by level, which of ten methods the
# next call goes to, so x = 0..N-1 makes N distinct 8-frame allocation stacks. It prints "done" when its
# work is over; the time from that line to the process's end is what the VM's exit costs, with the
# agent's report (collecting, rendering every file, writing them) and without the agent. Each is run
# RUNS times (3); every time is printed, the least first, and with the agent its own split of the exit
# (INSTR_EXIT_TIMES=1: wall, thread CPU and process CPU ms per step) for the run of the least time.
#
#     [RUNS=3] [AGENT=path/libinstr.so] bench/profile/many-stacks.sh [N] [JAVA_HOME...]
#     (N: 100000; default: every JDK in /usr/lib/jvm)
set -euo pipefail
n=${1:-100000}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
agent=${AGENT:-$root/target/release/libinstr.so}
runs=${RUNS:-3}
[ -f "$agent" ] || { echo "build the agent first: cargo build --release" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

{
  echo 'public class ManyStacks {'
  echo '  static Object sink;'
  for k in 0 1 2 3 4 5 6 7 8 9; do
    cases=''
    for j in 0 1 2 3 4 5 6 7 8 9; do cases+="case $j: return m$j(d - 1, x / 10); "; done
    echo "  static Object m$k(int d, int x) { if (d == 0) return new int[1 + (x & 3)]; switch (x % 10) { $cases default: return null; } }"
  done
  echo '  public static void main(String[] a) { int n = Integer.parseInt(a[0]);'
  echo '    for (int r = 0; r < 3; r++) for (int x = 0; x < n; x++) sink = m0(7, x);'
  echo '    System.out.println("done"); }'
  echo '}'
} > "$work/ManyStacks.java"

# Milliseconds from the program's "done" to the end of the process (its stdout closing); the process's
# stderr goes to $work/stderr.
exit_ms() {
  local done_at end
  done_at=$("$@" 2> "$work/stderr" | { read -r _; date +%s%N; cat > /dev/null; })
  end=$(date +%s%N)
  echo $(((end - done_at) / 1000000))
}

# `exit_ms` RUNS times: "least ms (all: a b c)"; the stderr of the least run is kept in $work/best.
best_of() {
  local all=() least=
  for _ in $(seq "$runs"); do
    local ms
    ms=$(exit_ms "$@")
    all+=("$ms")
    if [ -z "$least" ] || [ "$ms" -lt "$least" ]; then least=$ms; cp "$work/stderr" "$work/best"; fi
  done
  echo "$least (all: ${all[*]})"
}

homes=("$@")
if [ ${#homes[@]} -eq 0 ]; then
  # Each JDK once: /usr/lib/jvm holds links to the same JDK under other names.
  while read -r h; do homes+=("$h"); done < <(
    for h in /usr/lib/jvm/*/; do [ -x "$h/bin/javac" ] && realpath "$h"; done | sort -u)
fi
for home in "${homes[@]}"; do
  mkdir -p "$work/classes"
  "$home/bin/javac" -d "$work/classes" "$work/ManyStacks.java"
  version=$("$home/bin/java" -version 2>&1 | head -1)
  bare=$(best_of "$home/bin/java" -cp "$work/classes" ManyStacks "$n")
  with=$(INSTR_EXIT_TIMES=1 best_of "$home/bin/java" "-agentpath:$agent=file=$work/out,depth=8" -cp "$work/classes" ManyStacks "$n")
  sites=$(grep -c '"stack":' "$work/out.json" || true)
  bytes=$(cat "$work"/out.* | wc -c)
  echo "$version: $n x 3 allocations, $sites sites: exit ${bare} ms without the agent, ${with} ms with it (depth=8; reports $bytes bytes)"
  grep 'report steps' "$work/best" || true
  rm -rf "$work/classes" "$work"/out.*
done
