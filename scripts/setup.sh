#!/bin/bash
# Installs what building, testing and the demo of instr need on a fresh Debian machine (idempotent):
#   scripts/setup.sh        as root, or as a user with sudo (it re-runs itself through sudo, and only when
#                           something is missing: a machine already set up needs no root at all)
#   scripts/setup.sh -n     prints what it would install, installs nothing
# Rust is not installed here: it comes from the user's rustup toolchain (https://rustup.rs). JDKs are
# discovered under /usr/lib/jvm by the tests.
set -euo pipefail
dry_run=false elevated=false
for arg in "$@"; do
  case $arg in
    -n|--dry-run) dry_run=true ;;
    --elevated) elevated=true ;; # internal: this is the sudo re-run, whose PATH need not hold cargo
    *) echo "usage: scripts/setup.sh [-n]" >&2; exit 2 ;;
  esac
done

# Checked as the calling user: under sudo, PATH is root's, and rustup's ~/.cargo/bin is seldom on it.
if ! $elevated && ! command -v cargo >/dev/null 2>&1; then
  echo "setup.sh: cargo not found on PATH: install Rust with rustup (https://rustup.rs), then run this again" >&2
  exit 1
fi

# Every package whose files the tests, the demo or the scripts they call use, and why. Each is looked up
# with dpkg-query (by package, not command: `kill` is a bash builtin, and a jar is no command at all).
pkgs=(
  # javac, java, jar, javap, jimage: agent/build.rs, every test, scripts/demo.sh, scripts/build-api.sh.
  openjdk-17-jdk-headless
  # lib/src.zip of JDK 17: the javac workload of ../shared/workloads (tests/workloads.rs) compiles it.
  # It must match the installed JDK, so installing it may upgrade openjdk-17-* to the newest 17.0.x.
  openjdk-17-source
  # unzip: the javac workload extracts src.zip with it.
  unzip
  # gcc and libc headers: the JNI library of tests/agent.rs (JNI AllocObject), and Rust's linker.
  gcc libc6-dev
  # python3: parses the XML trace in tests/monitors.rs; bench/agent-bench.sh sums calls with it.
  python3
  # kill(1) (not the shell builtin): SIGQUIT and watchdog kills in tests/agent.rs and tests/monitors.rs.
  procps
  # nm: tests/ffi_layer.rs lists the symbols libinstr.so exports.
  binutils
  # gdb: a test that gives up on a hung JVM prints its threads' native stacks (tests/support hang_report).
  gdb
  # The jars of the workload kit: tests/probes.rs rewrites every class in them with every probe, and
  # tests/workloads.rs runs h2, lucene, xalan, fop and sunflow (install.sh of the kit lists the same).
  libasm-java libh2-java liblucene8-java libxalan2-java fop libbatik-java libsunflow-java
  libjavassist-java libbcel-java libbyte-buddy-java
  # JUnit 5 (junit-platform-console-standalone.jar): examples/junit and its test in tests/calls.rs.
  junit5
  # Chromium (/usr/bin/chromium) and node: profile/tests/browser.rs drives the HTML flame graph in it
  # through tests/browser/check.mjs (playwright-core), and profile/tests/pprof.rs decodes the pprof
  # output with the npm package pprof-format.
  chromium nodejs
  # VisualVM's heap library (lib-jfluid-heap.jar): tests/hprof.rs reads the agent's HPROF dumps with it.
  visualvm
  # curl and CA certificates: scripts/install-java25.sh downloads the Java 25 runtime (below).
  curl ca-certificates
)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || need+=("$p")
done
# The tests run on every JDK under /usr/lib/jvm, and must see the current LTS too; Debian 12 packages only
# 17. Without a JDK 25 or later, scripts/install-java25.sh (as root) puts a Temurin 25 runtime there.
java25=false
for release in /usr/lib/jvm/*/release; do
  feature=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([0-9]*\).*/\1/p' "$release" 2>/dev/null)
  [ "${feature:-0}" -ge 25 ] && java25=true
done
need_java25=$(! $java25 && echo true || echo false)

# npm comes with NodeSource's nodejs and separately with Debian's, whose npm package conflicts with
# NodeSource's nodejs: asked for only when no npm command is there.
command -v npm >/dev/null 2>&1 || need+=(npm)

# The npm projects of the tests, each installed by `npm ci` at its lock file's versions when its
# node_modules is missing or older than the lock file (npm writes node_modules/.package-lock.json).
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
npm_projects=()
for dir in "$root/tests/browser" "$root/profile/tests/pprof"; do
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] || npm_projects+=("$dir")
done

if $dry_run; then
  echo "would install: ${need[*]:-nothing}"
  $need_java25 && echo "would run: scripts/install-java25.sh"
  for dir in "${npm_projects[@]}"; do echo "would run: npm ci in $dir"; done
  exit 0
fi
root_work="${need[*]}${need_java25/false/}"
if [ -n "$root_work" ] && [ "$(id -u)" != 0 ]; then
  what="${need[*]}"
  if $need_java25; then what="${what:+$what and }a Java 25 runtime"; fi
  if ! command -v sudo >/dev/null 2>&1; then
    echo "setup.sh: must install $what as root: run it as root, or as a user with sudo" >&2
    exit 1
  fi
  echo "setup.sh: installing $what through sudo"
  # Not exec: the npm step below runs afterwards as the calling user, so that node_modules in the
  # checkout is theirs, not root's.
  sudo -- "$(readlink -f "${BASH_SOURCE[0]}")" --elevated
elif [ -n "$root_work" ]; then
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
  fi
  if $need_java25; then "$root/scripts/install-java25.sh"; fi
fi
$elevated && exit 0 # the packages were all the root run was for
for dir in "${npm_projects[@]}"; do
  (cd "$dir" && npm ci --no-audit --no-fund)
done
echo "JDKs: $(ls -d /usr/lib/jvm/*/bin/java 2>/dev/null | sed 's|/bin/java||' | xargs)"
