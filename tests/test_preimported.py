"""The tests' forked commands (`helpers.preimported`) answer as the real processes the users start."""

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from helpers import preimported

TOKENIZE = [sys.executable, "-m", "rnnsearch_tf.cli.main", "tokenize"]
ENVIRONMENT = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))


@pytest.mark.parametrize("args, text", [
    (["--lang=fr"], "L'homme a 3,5 kg.\r\nQu'il vienne !\n"),  # "\r\n" read as `text=True` reads it
    (["--lang=xx"], ""),  # refused at parsing, on stderr
    (["--lang=fr", "--model_dir=/no/such/folder"], "x\n"),  # refused by the command: one `error:` line
])
def test_a_forked_command_answers_as_a_real_process(args, text):
    real = subprocess.run(TOKENIZE + args, input=text, capture_output=True, text=True, env=ENVIRONMENT,
                          cwd=REPO_ROOT, timeout=120)
    forked = preimported.run(TOKENIZE + args, input=text, capture_output=True, text=True, env=ENVIRONMENT,
                             cwd=REPO_ROOT, timeout=120)
    assert (forked.returncode, forked.stdout, forked.stderr) == (real.returncode, real.stdout, real.stderr)
    assert real.stdout or real.returncode == 1 and real.stderr


def test_each_forked_command_has_its_own_folder_environment_and_flags(tmp_path):
    (tmp_path / "german.flags").write_text("--lang=de\n", encoding="utf-8")
    build = [sys.executable, "-m", "rnnsearch_tf.cli.main", "build-data", "--flagfile=configs/data/multi30k.flags"]
    for data in ("first", "second"):
        refused = preimported.run(build + [f"--output_dir={tmp_path / data}"], capture_output=True, text=True,
                                  env=dict(ENVIRONMENT, RNNSEARCH_DATA=str(tmp_path / data)), cwd=REPO_ROOT)
        assert refused.returncode == 1 and str(tmp_path / data) in refused.stderr.splitlines()[-1]
    german = preimported.run(TOKENIZE + ["--flagfile=german.flags"], input="Er kam z.B. gestern.\n",
                             capture_output=True, text=True, env=ENVIRONMENT, cwd=tmp_path, check=True)
    assert german.stdout == "Er kam z.B. gestern .\n"  # the flagfile read from its own folder


def test_a_forked_command_past_its_timeout_is_killed_and_the_next_one_runs():
    never_ends, writer = os.pipe()
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            preimported.run(TOKENIZE + ["--lang=fr"], stdin=never_ends, capture_output=True, env=ENVIRONMENT,
                            cwd=REPO_ROOT, timeout=5)
    finally:
        os.close(never_ends)
        os.close(writer)
    after = preimported.run(TOKENIZE + ["--lang=fr"], input="Oui.\n", capture_output=True, text=True, env=ENVIRONMENT,
                            cwd=REPO_ROOT, timeout=120)
    assert after.returncode == 0 and after.stdout == "Oui .\n"
