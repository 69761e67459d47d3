"""The house plan holds: every package imports only the packages below it (`.importlinter`)."""

import pathlib
import subprocess
import sys

from conftest import REPO_ROOT


def test_imports_point_down():
    lint_imports = pathlib.Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "1 kept, 0 broken" in result.stdout
