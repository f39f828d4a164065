#!/bin/bash
# The main job: builds libinstr.so, runs the bundled example program (test-classes/agent/AllocCounts.java:
# known allocations from one thread, eight threads, a static initialiser, reflection and method handles)
# under the agent with rules/default.yaml and stacks of depth 4, and writes its reports to target/demo/:
#   allocations.txt (hprof-style), allocations.json (exact counts), allocations.collapsed (flame graphs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] && bash scripts/setup.sh >/dev/null
cargo build --release -q -p instr-agent -p instr-cli
out=target/demo; rm -rf "$out"; mkdir -p "$out/classes"
javac -nowarn -d "$out/classes" test-classes/agent/AllocCounts.java
java -agentpath:"$PWD/target/release/libinstr.so=rules=rules/default.yaml,file=$out/allocations,depth=4" \
     -cp "$out/classes" AllocCounts
echo "reports: $out/allocations.txt $out/allocations.json $out/allocations.collapsed"
sed -n '/CLASSES BEGIN/,/^ *8 /p' "$out/allocations.txt"
