"""serving/client.py, the command-line client (`rnnsearch client`): files in and out over gRPC, REST with
scores, the truncated lines named, and no TensorFlow on the REST path; against `serving.local_server`,
and the real `tensorflow_model_server` whenever it is on PATH."""

import os
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from helpers.model_server import MODEL_NAME, SERVER_KINDS, start_server
from helpers.serving_test_utils import SEARCH_OPTIONS


@pytest.fixture(scope="module", params=SERVER_KINDS)
def server(request, tmp_path_factory):
    running = start_server(request.param, tmp_path_factory)
    yield running
    running.stop()


def test_command_line_client(server, tmp_path):
    long_line = " ".join(["cat"] * (SEARCH_OPTIONS["maximum_source_length"] + 1))
    inputs = ["the cat", "", "the dog sees a house .", long_line]
    (tmp_path / "input.txt").write_text("\n".join(inputs) + "\n", encoding="utf-8")
    common = [sys.executable, "-m", "serving.client", f"--model_name={MODEL_NAME}"]
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    stderr = subprocess.run(
        common + [f"--server={server.address}", f"--input_file={tmp_path / 'input.txt'}",
                  f"--output_file={tmp_path / 'output.txt'}", "--batch_size=2"],
        check=True, cwd=REPO_ROOT, env=environment, timeout=120, capture_output=True, text=True,
    ).stderr
    lines = (tmp_path / "output.txt").read_text(encoding="utf-8").split("\n")
    expected = server.client.translate(inputs)["translation"]
    assert lines == [t.decode("utf-8") for t in expected] + [""]
    assert "lines cut to the model's maximum_source_length (translated from their first tokens only): line 4\n" in stderr
    shown = subprocess.run(
        common + [f"--rest_url={server.rest_url}", "--with_scores", "the cat"],
        check=True, cwd=REPO_ROOT, env=environment, timeout=120, capture_output=True, text=True,
    ).stdout
    translation, score = shown.rstrip("\n").split("\t")
    assert translation == expected[0].decode("utf-8") and float(score) < 0


def test_rest_client_path_does_not_import_tensorflow():
    check = "import sys, serving.client; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, timeout=60).returncode == 0
