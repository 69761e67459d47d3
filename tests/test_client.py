"""rnnsearch_tf/cli/client.py, the command-line client (`rnnsearch client`): files in and out over gRPC (read as
`translate` reads them), standard input over REST with scores, an output file kept when no server answers, the
truncated lines named, and no TensorFlow on the REST path; against `rnnsearch serve`, and the real
`tensorflow_model_server` whenever it is on PATH."""

import os
import pathlib
import socket
import subprocess
import sys
import threading

import pytest

from conftest import REPO_ROOT
from helpers.model_server import MODEL_NAME, SERVER_KINDS, start_server
from helpers.serving_test_utils import SEARCH_OPTIONS
from helpers.terminal import terminal_stdin


@pytest.fixture(scope="module", params=SERVER_KINDS)
def server(request, tmp_path_factory):
    running = start_server(request.param, tmp_path_factory)
    yield running
    running.stop()


def test_command_line_client(server, tmp_path):
    long_line = " ".join(["cat"] * (SEARCH_OPTIONS["maximum_source_length"] + 1))
    inputs = ["the cat \ufffd", "", "the dog sees a house .", long_line]
    # Read as `translate` reads a file: "\r\n" line ends, a byte that is not UTF-8 as U+FFFD.
    lines_read_so = b"the cat \xff\r\n\r\nthe dog sees a house .\r\n" + long_line.encode() + b"\n"
    (tmp_path / "input.txt").write_bytes(lines_read_so)
    common = [sys.executable, "-m", "rnnsearch_tf.cli.main", "client", f"--model_name={MODEL_NAME}"]
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
        common + [f"--rest_url={server.rest_url}", "--with_scores"],
        input=f"{inputs[0]}\n\n{inputs[0]}\n",  # standard input
        check=True, cwd=REPO_ROOT, env=environment, timeout=120, capture_output=True, text=True,
    ).stdout
    rows = [line.split("\t") for line in shown.splitlines()]
    assert [translation for translation, _ in rows] == [t.decode("utf-8") for t in expected[:2]] + [expected[0].decode()]
    assert float(rows[0][1]) < 0 and rows[0] == rows[2]


def test_a_terminal_for_input_is_refused_in_one_line():
    """Without sentences or --input_file the client reads standard input, unless it is a terminal (it would wait)."""
    with terminal_stdin() as (stdin, _):
        refused = subprocess.run([str(pathlib.Path(sys.executable).parent / "rnnsearch"), "client",
                                  "--rest_url=http://127.0.0.1:9"], stdin=stdin, capture_output=True, text=True,
                                 cwd=REPO_ROOT, timeout=60)
    assert refused.returncode == 1 and refused.stderr == (
        "error: give sentences as arguments, --input_file, or lines on standard input (--help lists the flags)\n")


def test_rest_client_path_does_not_import_tensorflow():
    check = "import sys, rnnsearch_tf.cli.client; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, timeout=60).returncode == 0


def _client(*flags):
    """`rnnsearch client FLAGS`, as a user runs it (TensorFlow's native start-up lines hidden)."""
    command = [str(pathlib.Path(sys.executable).parent / "rnnsearch"), "client", *flags]
    return subprocess.run(command, cwd=REPO_ROOT, timeout=120, capture_output=True, text=True)


def test_a_refused_request_is_one_line_naming_the_server(server):
    for where in (f"--rest_url={server.rest_url}", f"--server={server.address}"):
        refused = _client(where, f"--model_name={MODEL_NAME}", "--signature_name=nope", "the cat")
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr[-2000:]
        assert refused.stderr.startswith(f"error: {where.split('=', 1)[1]}: "), refused.stderr
        assert "nope" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_no_server_there_is_one_line_naming_the_address_and_the_output_file_is_kept(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kept = tmp_path / "translations.fr"
    kept.write_text("the translations of an earlier run\n", encoding="utf-8")
    rest = _client(f"--rest_url=http://127.0.0.1:{port}", f"--output_file={kept}", "the cat")
    assert rest.returncode == 1 and rest.stderr == (
        f"error: http://127.0.0.1:{port}: [Errno 111] Connection refused (is a model server running there?)\n")
    assert kept.read_text(encoding="utf-8") == "the translations of an earlier run\n"  # opened at the first answer
    grpc_error = _client(f"--server=127.0.0.1:{port}", "--timeout=5", "the cat")
    assert grpc_error.returncode == 1 and grpc_error.stderr.startswith(f"error: 127.0.0.1:{port}: UNAVAILABLE: ")
    assert len(grpc_error.stderr.strip().splitlines()) == 1


def test_a_port_that_is_not_http_a_model_name_no_rest_path_holds_and_no_timeout_are_one_line(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))  # answers as a gRPC port does: HTTP/2 frames, not HTTP/1.1

    def answer():
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x7f\xff\xff\xff")

    threading.Thread(target=answer, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    with listener:
        not_http = _client(f"--rest_url={url}", "the cat")
    assert not_http.returncode == 1 and not_http.stderr == (
        f"error: {url}: no HTTP answer (BadStatusLine): is it the REST port, not the gRPC one?\n")
    versioned = _client(f"--rest_url={url}", "--model_name=enfr/versions/1", "the cat")
    assert versioned.returncode == 1 and versioned.stderr == (
        "error: model name 'enfr/versions/1': a REST path holds no '/' or ':' in a model name\n")
    no_time = _client(f"--rest_url={url}", "--timeout=0", "the cat")
    assert no_time.returncode == 1 and no_time.stderr.startswith("error: flag --timeout=0.0: --timeout must be above 0")
    assert len(no_time.stderr.splitlines()) == 1
