#!/bin/bash
# Installs what building and testing instr needs on a fresh Debian machine (idempotent; run as root).
# Rust comes from the machine's rustup toolchain. JDKs are discovered under /usr/lib/jvm by the tests.
set -euo pipefail
need=()
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/asm.jar ] || need+=(libasm-java)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi
echo "JDKs: $(ls -d /usr/lib/jvm/*/bin/javac 2>/dev/null | sed 's|/bin/javac||' | xargs)"
