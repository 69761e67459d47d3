"""`rnnsearch <command>` in a fresh process, as a user runs it, for the tests of the commands."""

import os
import sys

from conftest import REPO_ROOT
from helpers import preimported


def run_command(command, *args, timeout=300):
    """Runs `python -m rnnsearch_tf.cli.main COMMAND ARGS...` from the repository root; returns the
    `subprocess.CompletedProcess` with its text output (nothing raised on a non-zero exit)."""
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    return preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", command, *args],
                           capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=timeout)
