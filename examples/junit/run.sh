#!/bin/bash
# Compiles the example and runs its JUnit 5 tests under the agent, with Debian's junit5 jars:
#   examples/junit/run.sh            (needs: cargo build --release -p instr-agent; apt-get install junit5)
# Exit status: JUnit's (0 when every test passed).
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
OUT=${OUT:-$ROOT/target/example-junit}
JUNIT=/usr/share/java/junit-platform-console-standalone.jar
rm -rf "$OUT" && mkdir -p "$OUT/classes"
"$ROOT/scripts/build-api.sh" "$OUT/instr-api.jar" >/dev/null
javac --release 17 -d "$OUT/classes" -cp "$OUT/instr-api.jar:$JUNIT" src/shop/*.java test/shop/*.java
exec java -agentpath:"$ROOT/target/release/libinstr.so=rules=$PWD/rules.yaml,file=$OUT/instr-%p" \
  -jar "$JUNIT" --disable-banner --disable-ansi-colors --details=tree -cp "$OUT/classes:$OUT/instr-api.jar" --select-package shop
