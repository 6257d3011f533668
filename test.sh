#!/usr/bin/env bash
# Runs every test: the moto launcher's (pytest), then `./mvnw -B -T 2 verify`, after making sure the tools the
# tests start are here.
#  - moto's server, cfn-lint and pytest, at the versions in tools/python-requirements.txt (the machine's
#    python3's when it has them, else installed into .venv): the DynamoDB the tests talk to, the
#    template's lint, and the launcher's tests;
#  - buf (npm's @bufbuild/buf, pinned): the contracts' compatibility gate;
#  - Prometheus, Alertmanager and the blackbox exporter (Debian's packages): the end-to-end test checks the
#    Grafana dashboard's queries and the alert rules on it; promtool runs the alerts' unit tests
#    (AlertRulesTest), amtool and a real Alertmanager the routing (AlertmanagerTest), the exporter the
#    front door's probe (BlackboxProbeTest). Installed here when missing and we are root on a Debian-like machine;
#  - kubectl (1.21 or later): checked, not installed (see below).
set -euo pipefail
cd "$(dirname "$0")"

# moto's server and cfn-lint at their pinned versions (tools/python-requirements.txt): the machine's, or .venv.
source tools/python-env.sh

missing=()
if [ -z "${PROMETHEUS_BIN:-}" ] && ! command -v prometheus >/dev/null 2>&1; then missing+=(prometheus); fi
if [ -z "${ALERTMANAGER_BIN:-}" ] && ! command -v prometheus-alertmanager >/dev/null 2>&1; then
  missing+=(prometheus-alertmanager)
fi
if [ -z "${BLACKBOX_EXPORTER_BIN:-}" ] && ! command -v prometheus-blackbox-exporter >/dev/null 2>&1; then
  missing+=(prometheus-blackbox-exporter)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]} (Debian packages) for the dashboard, alert and probe checks ..."
    apt-get update -qq
    # The packages' services are not started here (no init system runs them); the tests start their own.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "${missing[*]} missing: apt-get install ${missing[*]} (or set PROMETHEUS_BIN, ALERTMANAGER_BIN," \
      "BLACKBOX_EXPORTER_BIN)" >&2
    exit 1
  fi
fi

# kubectl renders deploy/k8s for KubernetesManifestsTest. No registry here serves one recent enough
# (Debian's predates kustomize's `patches:`), so a missing or too old kubectl stops the run here,
# saying how to get one, rather than leaving Kubernetes unchecked.
if ! kubectl kustomize deploy/k8s/overlays/production >/dev/null 2>&1; then
  echo "kubectl is missing or cannot render deploy/k8s (it needs kubectl 1.21 or later):" >&2
  echo "  install it as https://kubernetes.io/docs/tasks/tools/ describes, then run ./test.sh again" >&2
  exit 1
fi

# buf, the contracts' lint and breaking-change check (ContractGateTest), at the version pinned in
# tools/buf/package-lock.json, installed there by npm when it is missing or another version.
BUF_VERSION=$(python3 -c 'import json; print(json.load(open("tools/buf/package.json"))["devDependencies"]["@bufbuild/buf"])')
if [ -z "${BUF_BIN:-}" ] && [ "$(tools/buf/node_modules/.bin/buf --version 2>/dev/null)" != "$BUF_VERSION" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "installing buf $BUF_VERSION into tools/buf (npm ci) ..."
    npm ci --prefix tools/buf --no-audit --no-fund --loglevel=error >/dev/null
  else
    echo "buf is missing and npm is not here to install it: install Node.js's npm, or set BUF_BIN to buf $BUF_VERSION" >&2
    exit 1
  fi
fi

# The CloudFormation template's structure is checked by CloudFormationTemplateTest; cfn-lint also checks it
# against AWS's resource schemas.
"${CFN_LINT[@]}" deploy/aws/*.yaml

# The moto launcher's own tests (tools/moto/tests): in process and quick, before the Java tests start it.
"$MOTO_PYTHON" -m pytest -q tools/moto/tests

# Two modules at once where the graph allows (the simulation and the benchmark's tests beside the gateway's):
# one module's last long test class otherwise leaves a core idle (docs/performance-log.md, the test suite).
exec ./mvnw -B -T 2 verify "$@"
