#!/usr/bin/env bash
# Installs rnnsearch-tf with its test extra into .venv (created if missing) and runs the default
# test suite (tests marked `large` are skipped: `-m large` runs them, as .ci/run does after the default
# suite; `-m ""` runs everything), one test file per core at a time (pytest-xdist; `-n 0` runs them one
# after the other).
# Data is found through RNNSEARCH_DATA (default: ../shared/data beside this checkout); PYTHON names the
# interpreter that creates .venv (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'; then
  echo "error: installing into .venv ($(.venv/bin/python --version 2>&1)) failed: rnnsearch-tf needs Python" \
       "3.10-3.13 (setup.py's python_requires) and the package index; a .venv of another Python is kept until" \
       "removed: rm -rf .venv, then run again with PYTHON=python3.11 (any of those)" >&2
  exit 1
fi
export RNNSEARCH_DATA=${RNNSEARCH_DATA:-$(cd .. && pwd)/shared/data}
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec .venv/bin/python -m pytest -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder "$@"
