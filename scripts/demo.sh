#!/bin/bash
# The main job, until the agent lands: builds rewrite-class, compiles the bundled example programs in
# test-classes/edge, rewrites them with the self-test edit, runs each one before and after under
# -Xverify:all, and writes the listings of one rewritten method. Output goes to target/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] && bash scripts/setup.sh >/dev/null
cargo build --release -q --bin rewrite-class
out=target/demo; rm -rf "$out"; mkdir -p "$out/classes"
javac -nowarn -d "$out/classes" $(grep -L '@requires-jdk' test-classes/edge/*.java)
target/release/rewrite-class --edit nop "$out/classes" -o "$out/rewritten" --dump main > "$out/listing.txt"
for c in $(cd "$out/classes" && ls *.class | grep -v '\$' | sed 's/\.class$//'); do
  javap -cp "$out/classes" -public "$c" 2>/dev/null | grep -q 'static void main' || continue
  before=$(java -Xverify:all -cp "$out/classes" "$c" 2>&1)
  after=$(java -Xverify:all -cp "$out/rewritten" "$c" 2>&1)
  [ "$before" = "$after" ] && echo "same output: $c" || { echo "DIFFERENT: $c"; exit 1; }
done
echo "listings of every rewritten main(): $out/listing.txt"
