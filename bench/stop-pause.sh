#!/bin/bash
# What a stop's collections cost a program with a large live heap (issue 18; agent/src/obsolete_code.rs):
#   bench/stop-pause.sh [-l MILLIONS] [-x HEAP] [-g "GC..."] [JDK_HOME...]
# For each JDK (default: every one under /usr/lib/jvm) and collector (default: G1 Parallel), starts
# test-classes/attach/AttachLoop with the agent at start=off, keeps MILLIONS million small objects live
# (default 120: about 2.4 GB), starts the allocation probe, runs some work so that the JIT compiles it with
# the probes, and stops the probe. Prints the stop's answer (what it collected, and how long that took) and,
# from -Xlog:safepoint, the pauses of the collections the stop made: their sum and the longest. The
# RedefineClasses pauses of the stop itself are left out (bench/attach-bench.sh measures those).
# A benchmark, not a test: it asserts nothing. Build first: cargo build --release -p instr-agent -p instr-cli.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
INSTR=${INSTR_BIN:-$ROOT/target/release/instr}
LIVE=120; HEAP=6g; GCS="G1 Parallel"
while getopts "l:x:g:" o; do
  case $o in l) LIVE=$OPTARG;; x) HEAP=$OPTARG;; g) GCS=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND - 1))
JDKS=${*:-$(ls -d /usr/lib/jvm/*/ | while read -r d; do [ -x "$d/bin/javac" ] && [ ! -L "${d%/}" ] && echo "${d%/}"; done)}
[ -f "$LIB" ] && [ -x "$INSTR" ] || { echo "build first: cargo build --release -p instr-agent -p instr-cli" >&2; exit 2; }
OUT=${WL_TMP:-/tmp/instr-stop-pause}; mkdir -p "$OUT"

# ask FIFO_FD OUTFILE COMMAND: sends a command to AttachLoop and waits for its "ok".
ask() {
  local before; before=$(grep -c '^ok$' "$2")
  echo "$3" >&"$1"
  while [ "$(grep -c '^ok$' "$2")" -le "$before" ]; do sleep 0.05; done
}

echo "# $(date -u +%F) $(git rev-parse --short HEAD 2>/dev/null); $LIVE million objects live, -Xmx$HEAP; load before: $(uptime | sed 's/.*load average: //')"
printf '%-10s %-9s %-28s %9s %9s %9s\n' jdk gc "the stop's collections" "said ms" "paused ms" "longest"
for jdk in $JDKS; do
  version=$("$jdk/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -1)
  classes=$OUT/classes-$(basename "$jdk")
  "$jdk/bin/javac" -nowarn -d "$classes" test-classes/attach/*.java java/instr-api/instr/Control.java || exit 2
  for gc in $GCS; do
    dir=$OUT/$(basename "$jdk")-$gc; rm -rf "$dir"; mkdir -p "$dir"
    rm -f "$dir/in"; mkfifo "$dir/in"
    "$jdk/bin/java" "-agentpath:$LIB=start=off,file=$dir/exit" "-XX:+Use${gc}GC" -Xms$HEAP -Xmx$HEAP \
      "-Xlog:safepoint:file=$dir/safepoints.log" -cp "$classes" AttachLoop < "$dir/in" > "$dir/out" 2> "$dir/err" &
    pid=$!
    exec 3> "$dir/in"
    while ! grep -q '^ok$' "$dir/out"; do sleep 0.05; done
    ask 3 "$dir/out" "keep $((LIVE * 1000000))"
    "$INSTR" ctl $pid start alloc > "$dir/start" 2>&1
    ask 3 "$dir/out" "run 200000 2"
    sleep 1
    from=$(wc -l < "$dir/safepoints.log")
    said=$("$INSTR" ctl $pid stop alloc 2>&1)
    sleep 0.5
    exec 3>&-
    wait $pid
    by=$(echo "$said" | sed -n 's/.*unloaded by \(.*\) in [0-9]* ms.*/\1/p')
    ms=$(echo "$said" | sed -n 's/.*unloaded by .* in \([0-9]*\) ms.*/\1/p')
    # Safepoint lines: 'Safepoint "OPERATION", ... Total: N ns'; the stop's own RedefineClasses left out.
    read -r total longest < <(tail -n +"$((from + 1))" "$dir/safepoints.log" | grep 'Safepoint "' \
      | grep -v RedefineClasses | sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' \
      | awk '{ s += $1; if ($1 > m) m = $1 } END { printf "%.1f %.1f\n", s / 1e6, m / 1e6 }')
    printf '%-10s %-9s %-28s %9s %9s %9s\n' "$version" "$gc" "${by:-none}" "${ms:--}" "$total" "$longest"
  done
done
