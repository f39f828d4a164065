#!/bin/bash
# The JIT's compilations per time of a bench/steady-bench.sh JVM run with STEADY_JIT=1:
#   bench/jit-per-time.sh LOG        (LOG: $WL_TMP/logs/WORKLOAD-MODE-I.log; its .jit beside it)
# Prints one line per time: the time's number, its process CPU ms, and how many methods C1 (levels 1-3)
# and C2 (level 4) compiled during it, read from the JVM's -Xlog:jit+compilation=debug log by the uptime
# that Repeat.java prints after each time. A JIT still compiling many methods per time long after a stop
# is a JIT still warming up (or recompiling in a loop); one compiling as few as a JVM never started is warm.
set -euo pipefail
log=$1 jit=${1%.log}.jit
[ -f "$jit" ] || { echo "no $jit: run bench/steady-bench.sh with STEADY_JIT=1" >&2; exit 2; }
awk '
  FNR == NR {  # the JIT log: "[12.345s] ID ATTRS LEVEL method (N bytes)"
    if (match($0, /^\[[0-9.]+s\]/)) {
      t = substr($0, 2, RLENGTH - 3) * 1000; rest = substr($0, RLENGTH + 1)
      if (rest ~ /made not entrant/) next
      n = split(rest, f, " "); level = -1
      for (i = 2; i <= n; i++) if (f[i] ~ /^[0-4]$/) { level = f[i]; break }
      if (level >= 1) { at[++c] = t; lv[c] = level }
    }
    next
  }
  $1 == "repeat:" && $2 ~ /^[0-9]+$/ {
    up = 0; for (i = 6; i <= NF; i++) if ($i ~ /^up=/) up = substr($i, 4) + 0
    c1 = 0; c2 = 0
    for (k = 1; k <= c; k++) if (at[k] > last && at[k] <= up) { if (lv[k] == 4) c2++; else c1++ }
    printf "%4d %7d ms  C1 %5d  C2 %5d%s\n", $2, $4, c1, c2, ($0 ~ /then st/ ? "  " $NF : "")
    last = up
  }' "$jit" "$log"
