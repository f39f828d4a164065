#!/bin/bash
# Installs what building and testing instr needs on a fresh Debian machine (idempotent; run as root).
# Rust comes from the machine's rustup toolchain. JDKs are discovered under /usr/lib/jvm by the tests.
set -euo pipefail
need=()
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
# gcc builds the JNI library of tests/agent.rs (JNI AllocObject); python3 parses the XML trace in
# tests/monitors.rs and sums the calls in bench/agent-bench.sh.
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# The jars of the workload kit: tests/probes.rs verifies every class in them, rewritten with every probe.
for p in libasm-java libh2-java liblucene8-java libxalan2-java fop libbatik-java libsunflow-java \
         libjavassist-java libbcel-java libbyte-buddy-java; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || need+=("$p")
done
# JUnit 5 (junit-platform-console-standalone.jar): examples/junit and its test in tests/calls.rs.
dpkg-query -W -f='${Status}\n' junit5 2>/dev/null | grep -q '^install ok installed' || need+=(junit5)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi
echo "JDKs: $(ls -d /usr/lib/jvm/*/bin/javac 2>/dev/null | sed 's|/bin/javac||' | xargs)"
