#!/bin/bash
# Builds the API jar, target/instr-api.jar (instr.Counts and instr.Control, docs/API.md), with the JDK's javac and jar:
#   scripts/build-api.sh [OUT.jar]
# Compiled for Java 17 (--release 17), so it loads on every supported JDK. tests/calls.rs builds the same jar.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/instr-api.jar}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
javac --release 17 -d "$TMP" java/instr-api/instr/Counts.java java/instr-api/instr/Control.java
mkdir -p "$(dirname "$OUT")"
jar --create --file "$OUT" -C "$TMP" .
echo "$OUT"
