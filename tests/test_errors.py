"""rnnsearch_tf/cli/errors.py: a user's mistake is one `error:` line and exit code 1 (the serving commands as
the others); a bug keeps its traceback."""

import pathlib
import signal
import sys

import pytest

from conftest import fresh_python
from helpers import preimported
from rnnsearch_tf.cli.errors import with_one_line_errors
from rnnsearch_tf.training.stop_request import Interrupted

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command, args, message", [
    ("export", ["--model_dir=/no/such/model", "--export_dir=/no/such/export"], "/no/such/model/data.json is missing"),
    ("serve", ["--model_base_path=/no/such/export"], "no version folder"),
    ("client", ["--rest_url=http://127.0.0.1:9", "--input_file=/no/such/input.txt"], "/no/such/input.txt"),
])
def test_the_serving_commands_end_a_mistake_in_one_line(command, args, message):
    module = ["rnnsearch_tf.cli.main", command]
    result = preimported.run([sys.executable, "-m", *module, *args], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=300)
    assert result.returncode == 1, result.stderr[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and message in last, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    verbose = preimported.run([sys.executable, "-m", *module, *args, "--verbosity=1"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=300)
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr


@pytest.mark.parametrize("command, args, message", [
    ("client", ["--rest_url=http://127.0.0.1:9", "--batch_size=0", "a"], "--batch_size=0: 0 is not a positive integer"),
    ("export", ["--model_dir=/no/such/model", "--export_dir=/no/such/export", "--version=-1"],
     "--version=-1: -1 is not a non-negative integer"),
    ("export", ["--model_dir=/no/such/model", "--export_dir=/no/such/export", "--maximum_batch_size=0"],
     "--maximum_batch_size=0: 0 is not a positive integer"),
])
def test_a_serving_commands_number_out_of_range_is_refused_before_it_runs(command, args, message):
    result = preimported.run([sys.executable, "-m", "rnnsearch_tf.cli.main", command, *args], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and message in result.stderr, result.stderr[-3000:]


def test_a_bug_keeps_its_exception_and_an_interrupt_exits_130(capsys):
    def bug(argv):
        raise RuntimeError("a bug")

    def interrupted(argv):
        raise KeyboardInterrupt

    with pytest.raises(RuntimeError, match="a bug"):
        with_one_line_errors(bug)(["prog"])
    with pytest.raises(SystemExit) as exit_request:
        with_one_line_errors(interrupted)(["prog"])
    assert exit_request.value.code == 130 and capsys.readouterr().err == "interrupted\n"

    def second_sigterm(argv):
        raise Interrupted(signal.SIGTERM)

    with pytest.raises(SystemExit) as exit_request:
        with_one_line_errors(second_sigterm)(["prog"])
    assert exit_request.value.code == 143 and capsys.readouterr().err == "interrupted\n"


def test_telling_a_user_error_from_a_bug_imports_nothing_heavy():
    # The client's error path ran in 4.6 instead of 0.25 s when this imported rnnsearch_tf.training (TensorFlow).
    script = "import sys; from rnnsearch_tf.cli.errors import user_errors; user_errors(); print('tensorflow' in sys.modules)"
    assert fresh_python(script) == ["False"]
