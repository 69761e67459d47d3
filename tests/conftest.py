"""Shared pytest fixtures."""

import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
# The commands' caches (`--function_cache`'s default) go to a folder of this test session, not the user's.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="rnnsearch-tests-cache-")


# Files of minutes, handed to the test workers before the others: with `--dist loadfile` a file runs on one
# worker, and one of them handed out last keeps the other worker idle until it ends (xdist's own order, most
# tests first, put test_learning.py, two tests and ~2 minutes, among the last). `scripts/test.sh` keeps this
# order (`--no-loadscope-reorder`). The first two hold `large` tests only (`-m large`: the quickstart first).
FIRST_FILES = (
    "test_quickstart.py", "test_learning.py", "test_trainer.py", "test_fault_tolerance.py", "test_shortlist.py",
)


def pytest_collection_modifyitems(items):
    """The tests of `FIRST_FILES` first, in that order; the others after them in their own order."""
    rank = {name: position for position, name in enumerate(FIRST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST_FILES)))


def fresh_python(script):
    """The words `script` prints when a new Python interpreter runs it in the repository (what a command
    imports can only be seen in a process that imported nothing before it); TensorFlow's log quiet."""
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, check=True,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PATH": "/usr/bin:/bin"},
    )
    return result.stdout.split()


@pytest.fixture(scope="session")
def data_root():
    """The folder of real corpora (RNNSEARCH_DATA, else ../shared/data beside the checkout)."""
    root = pathlib.Path(os.environ.get("RNNSEARCH_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not (root / "MANIFEST.md").exists() and not (root / "multi30k").exists():
        pytest.skip(f"no corpora under {root}: set RNNSEARCH_DATA to the data folder")
    return root
