#!/usr/bin/env bash
# Runs every test: `./mvnw -B verify`, after making sure the tools the tests start are here.
#  - moto's server for Python 3 (pip install 'moto[server]'): the DynamoDB the tests talk to;
#  - Prometheus (Debian's package): the end-to-end test checks the Grafana dashboard's queries and the
#    alert rules on it; its promtool runs the alerts' unit tests (AlertRulesTest).
#    Installed here when missing and we are root on a Debian-like machine.
set -euo pipefail
cd "$(dirname "$0")"

if ! "${MOTO_PYTHON:-python3}" -c 'import moto.server' 2>/dev/null; then
  echo "moto's server is missing for ${MOTO_PYTHON:-python3}: pip install 'moto[server]' (or set MOTO_PYTHON)" >&2
  exit 1
fi

if [ -z "${PROMETHEUS_BIN:-}" ] && ! command -v prometheus >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing prometheus (Debian package) for the dashboard and alert checks ..."
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "prometheus is missing: apt-get install prometheus (or set PROMETHEUS_BIN)" >&2
    exit 1
  fi
fi

# The CloudFormation template's structure is checked by CloudFormationTemplateTest; cfn-lint, where it
# is installed, also checks it against AWS's resource schemas. Not installed here.
if command -v cfn-lint >/dev/null 2>&1; then
  cfn-lint deploy/aws/*.yaml
else
  echo "cfn-lint not found: skipping the lint of deploy/aws/ (pip install cfn-lint to run it)"
fi

exec ./mvnw -B verify "$@"
