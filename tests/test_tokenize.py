"""The `rnnsearch tokenize` filter, run as users run it: on piped text, and line by line at a terminal."""

import os
import sys

from conftest import REPO_ROOT
from helpers.terminal import typed
from helpers import preimported


def _run(args, text):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize", *args],
        input=text.encode(), capture_output=True, check=True, env=environment, cwd=REPO_ROOT,
    )
    return result.stdout.decode()


def test_tokenize_and_detokenize_filter_stdin():
    assert _run(["--lang=fr"], "L'homme a 3,5 kg.\n\nQu'il vienne !\n") == "L' homme a 3,5 kg .\n\nQu' il vienne !\n"
    assert _run(["--lang=en", "--detokenize"], "It 's  1,000 \" cats \" .\n") == 'It\'s 1,000 "cats".\n'
    assert _run(["--lang=de"], "Er kam z.B. gestern, usw. Dann ging er.\n") == (
        "Er kam z.B. gestern , usw. Dann ging er .\n")


def test_lines_typed_at_a_terminal_are_tokenized_as_they_come():
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    command = [sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize", "--lang=fr"]
    answers, stderr, returncode = typed(command, ["L'homme a 3,5 kg.", "Qu'il vienne !"], environment, REPO_ROOT)
    assert returncode == 0, stderr
    assert answers == ["L' homme a 3,5 kg .", "Qu' il vienne !"]


def test_a_batch_of_no_lines_is_refused_when_the_flags_are_parsed():
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    for value in ("0", "-1"):
        result = preimported.run(
            [sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize", "--lang=en", f"--batch_lines={value}"],
            input=b"a\n", capture_output=True, env=environment, cwd=REPO_ROOT,
        )
        assert result.returncode == 1 and result.stdout == b""
        assert f"flag --batch_lines={value}: {value} is not a positive integer" in result.stderr.decode()


def test_a_byte_order_mark_opening_the_input_is_no_token():
    """Windows editors open UTF-8 text with one; it is skipped as build-data and translate skip it."""
    assert _run(["--lang=en"], "\ufeffHello, world.\nSecond line.\n") == "Hello , world .\nSecond line .\n"


def test_a_model_dir_that_is_neither_a_model_nor_a_data_directory_is_named_by_its_flag(tmp_path):
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    result = preimported.run(
        [sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize", f"--model_dir={tmp_path / 'missing'}"],
        input=b"a\n", capture_output=True, env=environment, cwd=REPO_ROOT,
    )
    assert result.returncode == 1 and result.stderr.decode().strip().splitlines()[-1] == (
        f"error: --model_dir={tmp_path / 'missing'} is neither a model directory (no model.json) nor a data "
        "directory (no metadata.json): give the --model_dir of `rnnsearch train` or the --output_dir of "
        "`rnnsearch build-data`")
