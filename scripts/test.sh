#!/usr/bin/env bash
# Installs rnnsearch-tf with its test extra into .venv (created if missing) and runs the default
# test suite (tests marked `large` are skipped: `-m large` runs them, as .ci/run does after the default
# suite; `-m ""` runs everything), one test file per core at a time (pytest-xdist; `-n 0` runs them one
# after the other).
# Data is found through RNNSEARCH_DATA (default: ../shared/data beside this checkout).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
export RNNSEARCH_DATA=${RNNSEARCH_DATA:-$(cd .. && pwd)/shared/data}
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec .venv/bin/python -m pytest -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder "$@"
