#!/bin/bash
# The main job: builds libinstr.so and the `instr` tool, runs the bundled example program
# (test-classes/agent/AllocCounts.java: known allocations from one thread, eight threads, a static
# initialiser, reflection and method handles) under the agent with rules/demo.yaml (allocations with
# stacks of depth 4, and every call of the example's own methods counted exactly) and the CPU and wall
# samplers (cpu=1ms, wall=5ms: times come from samples, beside the exact counts), and writes its reports
# to target/demo/: profile.html (flame graphs of every view: open it in a browser), profile.txt
# (hprof-style, with CPU SAMPLES), profile.json (the profile: `instr report` renders it again),
# profile.collapsed, profile.cpu.collapsed and profile.wall.collapsed, profile.pb.gz (pprof),
# profile.samples (the sample log) and profile.svg (the allocated bytes, for embedding).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] && bash scripts/setup.sh >/dev/null
cargo build --release -q -p instr-agent -p instr-cli
out=target/demo; rm -rf "$out"; mkdir -p "$out/classes"
# The example uses sun.misc.Unsafe on purpose, which javac warns about: shown only if it fails.
javac -nowarn -d "$out/classes" test-classes/agent/AllocCounts.java 2>"$out/javac.log" || { cat "$out/javac.log"; exit 1; }
java -agentpath:"$PWD/target/release/libinstr.so=rules=rules/demo.yaml,file=$out/profile,calls=counts,cpu=1ms,wall=5ms" \
     -cp "$out/classes" AllocCounts
target/release/instr report "$out/profile.json" --format svg --view bytes -o "$out/profile.svg"
sed -n '/CLASSES BEGIN/,/^ *8 /p' "$out/profile.txt"
echo
echo "reports in $out/:"
for f in profile.html profile.txt profile.json profile.collapsed profile.cpu.collapsed profile.wall.collapsed \
         profile.pb.gz profile.samples profile.svg; do
  printf '  %-24s %s\n' "$f" "$(du -h "$out/$f" | cut -f1)"
done
echo "open $PWD/$out/profile.html in a browser"
