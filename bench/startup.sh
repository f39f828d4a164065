#!/bin/bash
# Start-up of a hello world under the agent, on every JDK under /usr/lib/jvm, beside the JVM's own:
#   bench/startup.sh [-n RUNS] [JAVA_HOME...]
# Each round runs every mode once, in turn (so that a change of machine load falls on all of them);
# prints the median wall milliseconds of RUNS rounds and the ratio to the JVM without an agent. Modes:
#   none       no agent
#   xshare-off no agent, -Xshare:off: the price of the class data sharing the early class hook turns off
#   empty      the agent with rules/empty.yaml (nothing rewritten; CDS stays on)
#   default    the agent with rules/default.yaml (early=auto: the early class hook on JDK 17, which
#              rewrites every class as it loads and turns class-data sharing off; CDS kept on JDK 25+)
#   default-early  default with early=on (the early class hook on every JDK)
#   default-cds  default with early=off (CDS kept; the probes go in at VM_INIT by retransformation)
#   app        rules selecting Hello alone (early=auto: CDS kept; Object retransformed at VM_INIT)
#   app-early  app with early=on
#   default-coh  on JDKs that have it, default with -XX:+UseCompactObjectHeaders
# Build first: cargo build --release -p instr-agent. A benchmark, not a test: it asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
LIB=${INSTR_LIB:-$ROOT/target/release/libinstr.so}
N=10
while getopts "n:" o; do case $o in n) N=$OPTARG;; *) exit 2;; esac; done
shift $((OPTIND - 1))
[ -f "$LIB" ] || { echo "missing $LIB: cargo build --release -p instr-agent" >&2; exit 2; }
. bench/jdks.sh
installed_jdks "$@"
OUT=$(mktemp -d /tmp/instr-startup.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/Hello.java" <<'EOF'
public class Hello { public static void main(String[] a) { System.out.println("hello"); } }
EOF
printf 'probes: [objects, arrays]\nallocations:\n  include: [Hello]\n' > "$OUT/app.yaml"
opts() {  # opts MODE
  case $1 in
    none) ;;
    xshare-off) echo "-Xshare:off" ;;
    empty) echo "-agentpath:$LIB=rules=$ROOT/rules/empty.yaml,file=$OUT/r-%p" ;;
    default) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p" ;;
    default-early) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,early=on,file=$OUT/r-%p" ;;
    default-cds) echo "-agentpath:$LIB=rules=$ROOT/rules/default.yaml,early=off,file=$OUT/r-%p" ;;
    app) echo "-agentpath:$LIB=rules=$OUT/app.yaml,file=$OUT/r-%p" ;;
    app-early) echo "-agentpath:$LIB=rules=$OUT/app.yaml,early=on,file=$OUT/r-%p" ;;
    default-coh) echo "-XX:+UseCompactObjectHeaders -agentpath:$LIB=rules=$ROOT/rules/default.yaml,file=$OUT/r-%p" ;;
  esac
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "hello world start-up, median of $N rounds, wall ms; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for home in "${HOMES[@]}"; do
  java=$home/bin/java
  "$home/bin/javac" -d "$OUT/$(basename "$home")" "$OUT/Hello.java" || continue
  cp=$OUT/$(basename "$home")
  modes="none xshare-off empty default default-early default-cds app app-early"
  "$java" -XX:+UseCompactObjectHeaders -version > /dev/null 2>&1 && modes="$modes default-coh"
  for m in $modes; do : > "$OUT/$m.ms"; done
  for _ in $(seq "$N"); do
    for m in $modes; do
      s=$(date +%s%N)
      # shellcheck disable=SC2046
      "$java" $(opts "$m") -cp "$cp" Hello > /dev/null 2> "$OUT/$m.err" || { echo "FAILED: $m on $home: $(head -1 "$OUT/$m.err")" >&2; }
      echo $(( ($(date +%s%N) - s) / 1000 )) >> "$OUT/$m.ms"
    done
  done
  base=$(median < "$OUT/none.ms")
  echo
  echo "$("$java" -version 2>&1 | head -1) ($home)"
  printf '%-14s %9s %7s\n' mode ms ratio
  for m in $modes; do
    v=$(median < "$OUT/$m.ms")
    awk -v m="$m" -v v="$v" -v b="$base" 'BEGIN { printf "%-14s %9.1f %7.2f\n", m, v / 1000, v / b }'
  done
  rm -f "$OUT"/r-*
done
