#!/usr/bin/env bash
# Runs every benchmark scenario on this machine and writes docs/benchmarks.md (its data for tools: target/benchmarks.json).
# Needs what ./run.sh needs, plus nginx for the proxy comparison (installed here when missing and root).
# Usage: ./bench.sh [--quick] [--only N,...] [--out FILE] [--baseline DIR] [--java25 PATH]
#   (--baseline: docs/benchmarks.md, Reproduce; --java25: docs/benchmarking.md, scenario 5)
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v nginx >/dev/null 2>&1 && [ -z "${NGINX_BIN:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >/dev/null
  else
    echo "nginx is missing: apt-get install nginx-light (or set NGINX_BIN)" >&2
    exit 1
  fi
fi
# moto's server at its pinned version (tools/python-requirements.txt): the machine's, or installed into .venv.
source tools/python-env.sh
# A JDK 25 or later for scenario 5's AOT-cache columns, found as run.sh finds it (JAVA25_HOME first).
source tools/java-env.sh
if [ -n "$JAVA_AOT" ]; then export JAVA25_HOME="${JAVA_AOT%/bin/java}"; fi
# Always from the sources as they are: a jar left from an earlier build would measure older code.
./mvnw -B -q -DskipTests package
exec java -Dproject.root="$PWD" -jar bench/target/bench.jar "$@"
