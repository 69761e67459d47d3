"""bench.peer_comparison: what it refuses before it trains anything."""

import pathlib
import subprocess
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_too_few_updates_for_a_statistics_window_are_refused_before_any_training(tmp_path):
    result = subprocess.run([sys.executable, "-m", "bench.peer_comparison", "--updates=30", "--log_every=20",
                             f"--workdir={tmp_path / 'work'}"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 1
    assert "--updates=30 leaves no statistics window" in result.stderr and "at least 40 updates" in result.stderr
    assert not (tmp_path / "work").exists()
