"""`rnnsearch <command>`: one command for the whole tool, each command also `python -m MODULE`."""

import ast
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import REPO_ROOT, fresh_python
from rnnsearch_tf.cli.main import COMMANDS

RNNSEARCH = pathlib.Path(sys.executable).parent / "rnnsearch"


def run(*args):
    return subprocess.run([str(RNNSEARCH), *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def test_usage_lists_every_command():
    result = run("--help")
    assert result.returncode == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout


def test_unknown_command_is_named():
    result = run("trian")
    assert result.returncode == 2 and "unknown command 'trian'" in result.stderr


@pytest.mark.parametrize("command, help_flag, own_flags", [
    ("train", "--helpshort", ["--train_steps", "--learning_rate", "--hidden_dim"]),  # its module's and config_flags'
    ("translate", "-h", ["--split_sentences", "--beam_size"]),  # its module's and search_flags'
    ("tokenize", "--help", ["--lang"]),
])
def test_a_command_shows_its_own_help_and_flags(command, help_flag, own_flags):
    result = run(command, "--modle_dir=typo", help_flag)  # help whatever else the line holds, as argparse's -h
    assert result.returncode == 0, result.stderr[-2000:]  # absl's own help flags exit with 1
    # The docstring is read from the source: importing two commands in one process would define their
    # shared flags twice.
    source = pathlib.Path(importlib.util.find_spec(COMMANDS[command][0]).origin).read_text(encoding="utf-8")
    assert ast.get_docstring(ast.parse(source)).splitlines()[0] in result.stdout
    listed = {line.split(":")[0].strip().replace("--[no]", "--") for line in result.stdout.splitlines()
              if line.startswith("  --")}
    assert set(own_flags) <= listed, sorted(listed)
    assert "--test_srcdir" not in listed and "--alsologtostderr" not in listed  # absl's own: --helpfull


def test_full_help_lists_every_flag_and_help_after_a_double_dash_is_an_argument():
    full = run("tokenize", "--helpfull")
    assert full.returncode == 0 and "--lang" in full.stdout and "--alsologtostderr" in full.stdout
    assert "--[no]helpxml" in full.stdout  # absl's help flags are defined before it prints
    after_dashes = run("tokenize", "--lang=fr", "--", "-h")
    assert after_dashes.returncode == 1 and "unexpected arguments: ['-h']" in after_dashes.stderr


COMMAND_SOURCES = sorted({pathlib.Path(importlib.util.find_spec(module).origin) for module, _ in COMMANDS.values()}
                         | set((REPO_ROOT / "bench").glob("*.py")))


@pytest.mark.parametrize("source", COMMAND_SOURCES, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_the_examples_of_a_commands_help_are_lines_a_shell_takes(source):
    """A docstring's example split over lines keeps its backslash (a raw docstring): in a plain one, `\\` and the
    newline join the lines, and `--help` shows one line with the next line's indentation inside it."""
    docstring = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
    examples = [line.strip() for line in docstring.splitlines()
                if line.strip().startswith("rnnsearch ") or "python -m " in line]
    for example in examples:
        assert not re.search(r"\S {2,}\S", example.split("  #")[0]), example  # a comment may follow two spaces


def test_tokenize_through_the_command_equals_python_m(tmp_path):
    text = "L'homme a 3,5 kg.\n"
    via_command = subprocess.run([str(RNNSEARCH), "tokenize", "--lang=fr"], input=text, capture_output=True, text=True,
                                 cwd=REPO_ROOT, timeout=300)
    via_module = subprocess.run([sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize", "--lang=fr"], input=text,
                                capture_output=True, text=True, cwd=REPO_ROOT, timeout=300)
    assert via_command.returncode == 0, via_command.stderr[-2000:]
    assert via_command.stdout == via_module.stdout and via_command.stdout.strip()


@pytest.mark.parametrize(
    "args, message",
    [
        (("translate", "--model_dir=/no/such/model"), "/no/such/model"),
        (("translate", "--saved_model=/no/such/export"), "/no/such/export"),
        (("train", "--flagfile=configs/tiny.flags", "--data_dir=/no/such/data", "--model_dir=/tmp/unused"),
         "/no/such/data"),
    ],
)
def test_a_user_error_is_one_line_and_exit_code_1(args, message):
    result = run(*args)
    assert result.returncode == 1, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr[-3000:]
    assert "Traceback" not in result.stderr


def test_verbosity_brings_back_the_traceback():
    result = run("translate", "--model_dir=/no/such/model", "--verbosity=1")
    assert result.returncode == 1 and "Traceback" in result.stderr


def test_commands_import_tensorflow_without_matplotlib_which_still_works_after():
    script = (
        "import sys\n"
        "from rnnsearch_tf.cli.main import import_tensorflow_without_matplotlib\n"
        "import_tensorflow_without_matplotlib()\n"
        "assert 'keras' in sys.modules and 'tensorflow' in sys.modules\n"
        "print('matplotlib' in sys.modules, 'matplotlib.pyplot' in sys.modules)\n"
        "from rnnsearch_tf.evaluation import plots\n"
        "import matplotlib.pyplot\n"
        "print(matplotlib.pyplot.get_backend().lower())\n"
    )
    assert fresh_python(script) == ["False", "False", "agg"]
