# Sourced by ./test.sh, ./run.sh and ./bench.sh: sets MOTO_PYTHON (a python with moto's server) and CFN_LINT (cfn-lint), at
# the versions in tools/python-requirements.txt. The machine's python3 is used when it has them already (or
# MOTO_PYTHON names one that does); otherwise they are installed into a project-local environment, .venv.

# Whether $1 (a python) has every pinned distribution at its pinned version.
python_has_pins() {
  "$1" - tools/python-requirements.txt <<'PY' 2>/dev/null
import re, sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, pinned = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==(\S+)", line).groups()
    try:
        if version(name) != pinned:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
}

if [ -n "${MOTO_PYTHON:-}" ] && python_has_pins "$MOTO_PYTHON"; then
  :
elif python_has_pins python3; then
  MOTO_PYTHON=python3
else
  if [ ! -x .venv/bin/python ] || ! python_has_pins .venv/bin/python; then
    echo "installing the pinned Python tools (tools/python-requirements.txt) into .venv ..."
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tools/python-requirements.txt
  fi
  MOTO_PYTHON="$PWD/.venv/bin/python" # absolute: the tests start moto from their modules' directories
fi
# cfn-lint from the same python, whichever it is (its console script's entry point).
CFN_LINT=("$MOTO_PYTHON" -c 'import sys; from cfnlint.runner import main; sys.argv[0] = "cfn-lint"; sys.exit(main())')
export MOTO_PYTHON
