"""serving/local_server.py over loopback gRPC and REST, and the real `tensorflow_model_server` whenever it
is on PATH with the same tests: metadata, every signature, bad text and bad requests, concurrent, stalled
and malformed clients; an int8 export with the translation page. The command-line client against these servers is
tests/test_client.py."""

import concurrent.futures
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import grpc
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

from conftest import REPO_ROOT
from serving.browser_guard import BrowserGuard
from serving.grpc_client import GrpcClient
from serving.local_server import LocalServer, check_port, page_url
from serving.model_manager import ModelManager
from serving.rest_app import RestApp
from serving.rest_client import RestClient
from serving.served_model import ServedModel
from helpers.model_server import (MAX_REQUEST_BYTES, MODEL_NAME, REST_CHANNEL_TIMEOUT, SERVER_KINDS, RunningServer,
                                  start_server)
from helpers.serving_test_utils import (BAD_SENTENCES, INVALID_UTF8, SEARCH_OPTIONS, SENTENCES, assert_outputs_equal,
                                        exported_model)
from helpers.trained_toy_model import dev_pairs, translated
from helpers.trained_toy_model import exported as trained_toy_model_export
from helpers import preimported


@pytest.fixture(scope="module", params=SERVER_KINDS)
def server(request, tmp_path_factory):
    """A server of each kind for the module's tests; ours then stops on SIGTERM as on Ctrl-C: status 0, "stopped"."""
    running = start_server(request.param, tmp_path_factory)
    yield running
    status = running.stop()
    if running.kind == "local_server":
        log = running.log_path.read_text()
        assert status == 0 and log.rstrip().endswith("stopped"), (status, log[-2000:])


@pytest.fixture(scope="module")
def translator(exported_translator):
    return exported_translator


def _expect_error(code, pattern, call):
    with pytest.raises(grpc.RpcError) as raised:
        call()
    assert raised.value.code() == code, raised.value.details()
    assert pattern in raised.value.details(), raised.value.details()


def test_metadata_lists_every_signature(server):
    signatures = server.client.metadata()
    assert {"serving_default", "translate", "translate_ids", "score", "settings"} <= set(signatures)
    assert list(signatures["translate"].inputs) == ["text"]
    assert {"translation", "score", "tokens", "alignment", "nbest_translations"} <= set(signatures["translate"].outputs)


def test_every_signature_equals_the_python_path(server, translator):
    text = SENTENCES + BAD_SENTENCES
    for signature_name in ("translate", "serving_default"):
        assert_outputs_equal(server.client.translate(text, signature_name), translator.translate(tf.constant(text)))
    source_ids = [[4, 6, 9, 0], [7, 0, 0, 0]]
    assert_outputs_equal(server.client.translate_ids(source_ids), translator.translate_ids(tf.constant(source_ids)))
    targets = ["le chat", "", "la maison verte", "un"]
    assert_outputs_equal(
        server.client.score(SENTENCES, targets), translator.score(tf.constant(SENTENCES), tf.constant(targets))
    )
    settings = server.client.predict({}, "settings")
    assert settings["beam_size"] == SEARCH_OPTIONS["beam_size"]


def test_bad_text_has_defined_results(server):
    outputs = server.client.translate(["", " \t ", "a\x00\x07b", INVALID_UTF8, " ".join(["dog"] * 1000)])
    assert list(outputs["translation"][:2]) == [b"", b""]
    assert list(outputs["truncated"]) == [False, False, False, False, True]
    assert outputs["source_tokens"].shape[1] == SEARCH_OPTIONS["maximum_source_length"] + 1
    assert outputs["translation"].shape == (5,)
    empty = server.client.translate([])
    assert empty["translation"].shape == (0,) and empty["alignment"].shape[0] == 0
    assert server.client.translate(["the cat"] * 1000)["translation"].shape == (1000,)


def test_bad_requests_are_invalid_argument_and_the_server_lives(server):
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    client = server.client
    _expect_error(invalid, "1000", lambda: client.translate(["the cat"] * 1001))
    _expect_error(invalid, "vocabulary ids", lambda: client.translate_ids([[4, 1000]]))
    _expect_error(invalid, "as many sentences", lambda: client.score(["a", "b"], ["la"]))
    # Checked against the signature by the server itself: only the local server's wording is known.
    def own(name):
        return name if server.kind == "local_server" else ""

    _expect_error(invalid, own("text"), lambda: client.predict({"text": np.array([1, 2], np.int32)}, "translate"))
    _expect_error(invalid, own("text"), lambda: client.predict({"text": np.array([[b"a"]], object)}, "translate"))
    _expect_error(invalid, own("text"), lambda: client.predict({"text": np.array(b"a", object)}, "translate"))
    _expect_error(
        invalid, own("source_ids"), lambda: client.predict({"source_ids": np.array([[4.0]])}, "translate_ids")
    )
    _expect_error(invalid, own("text"), lambda: client.predict({"sentences": np.array([b"a"], object)}, "translate"))
    _expect_error(invalid, own("text"), lambda: client.predict({}, "translate"))
    _expect_error(
        invalid, "no_such_signature", lambda: client.predict({"text": np.array([b"a"], object)}, "no_such_signature")
    )
    _expect_error(
        grpc.StatusCode.NOT_FOUND, "other_model", lambda: GrpcClient(server.address, "other_model").translate(["a"])
    )
    versioned = predict_pb2.PredictRequest()
    versioned.model_spec.name, versioned.model_spec.signature_name = MODEL_NAME, "translate"
    versioned.model_spec.version.value = 999
    versioned.inputs["text"].CopyFrom(tf.make_tensor_proto(np.array([b"a"], object)))
    with grpc.insecure_channel(server.address) as channel:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
        _expect_error(grpc.StatusCode.NOT_FOUND, "999", lambda: stub.Predict(versioned, timeout=60))
    if server.kind == "local_server":
        _expect_error(
            grpc.StatusCode.RESOURCE_EXHAUSTED, "", lambda: client.translate(["x" * (MAX_REQUEST_BYTES + 10)])
        )
        copies = tf.make_tensor_proto(np.array([b"x" * 1024], object))
        copies.tensor_shape.dim[0].size = 200_000  # about 1 KB on the wire, 200 MB once expanded
        resident = server.resident_bytes()
        _expect_error(invalid, "bytes in all", lambda: client.predict({"text": copies}, "translate"))
        assert server.resident_bytes() - resident < 100 << 20
    assert server.alive()
    assert client.translate(["the dog"])["translation"].shape == (1,)


def test_eight_concurrent_clients_of_fifty_requests(server):
    def one_client(index):
        client = GrpcClient(server.address, MODEL_NAME, timeout=120)
        try:
            for request in range(50):
                sentence = SENTENCES[(index + request) % len(SENTENCES)]
                outputs = client.translate([sentence])
                assert outputs["translation"].shape == (1,)
            return 50
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        assert sum(pool.map(one_client, range(8))) == 400


def test_rest_api_equals_grpc(server):
    client = RestClient(server.rest_url, MODEL_NAME)
    served = server.client.translate(SENTENCES + [INVALID_UTF8])
    over_rest = client.translate(SENTENCES + [INVALID_UTF8])
    assert [t.encode("utf-8") for t in over_rest["translation"]] == list(served["translation"])
    np.testing.assert_allclose(over_rest["score"], served["score"], rtol=1e-6)
    np.testing.assert_allclose(over_rest["alignment"], served["alignment"], rtol=1e-6)
    assert client.score(["the cat"], ["le chat"])["log_prob"].shape == (1,)
    with pytest.raises(RuntimeError, match="HTTP 400"):
        client.translate_ids([[4, 1000]])
    assert server.alive()


def test_rest_formats_as_tf_serving_documents(server):
    """Model status, metadata and the row ("instances") format of https://www.tensorflow.org/tfx/serving/api_rest."""
    model_url = f"{server.rest_url}/v1/models/{MODEL_NAME}"
    status = json.loads(_get(model_url)[1])["model_version_status"]
    assert [entry["state"] for entry in status] == ["AVAILABLE"]
    signatures = json.loads(_get(f"{model_url}/metadata")[1])["metadata"]["signature_def"]["signature_def"]
    assert signatures["translate"]["inputs"]["text"]["dtype"] == "DT_STRING"
    assert "alignment" in signatures["translate"]["outputs"]
    expected = server.client.translate(["the cat", "the dog sees a house ."])
    code, text = _post(f"{model_url}:predict", json.dumps(
        {"signature_name": "translate", "instances": ["the cat", "the dog sees a house ."]}))
    predictions = json.loads(text)["predictions"]
    assert code == 200 and [row["translation"] for row in predictions] == [
        t.decode("utf-8") for t in expected["translation"]]
    np.testing.assert_allclose([row["score"] for row in predictions], expected["score"], rtol=1e-6)
    code, text = _post(f"{model_url}:predict", json.dumps(
        {"signature_name": "score", "instances": [{"source": "the cat", "target": "le chat"}]}))
    expected_score = server.client.score(["the cat"], ["le chat"])["log_prob"]
    assert code == 200
    np.testing.assert_allclose(json.loads(text)["predictions"][0]["log_prob"], expected_score[0], rtol=1e-6)
    code, text = _get(f"{model_url}/versions/999/metadata")
    assert code == 404 and "999" in text
    assert _get(f"{server.rest_url}/v1/models/other_model")[0] == 404


def test_prometheus_metrics_count_each_request(server):
    """TF Serving's metric names (prometheus_client writes a counter NAME as NAME_total: serving/metrics.py)."""
    from prometheus_client.parser import text_string_to_metric_families

    def ok_requests():
        text = _get(f"{server.rest_url}/monitoring/prometheus/metrics")[1]
        return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
                   if sample.name in (":tensorflow:serving:request_count", ":tensorflow:serving:request_count_total")
                   and sample.labels == {"model_name": MODEL_NAME, "status": "OK"})

    before = ok_requests()
    server.client.translate(["the cat"])
    RestClient(server.rest_url, MODEL_NAME).translate(["the dog"])
    assert ok_requests() == before + 2


def test_rest_concurrent_stalled_and_malformed_clients(server):
    def one_client(index):
        client = RestClient(server.rest_url, MODEL_NAME, timeout=120)
        return sum(client.translate([SENTENCES[(index + r) % len(SENTENCES)]])["translation"].shape[0]
                   for r in range(20))

    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        assert sum(pool.map(one_client, range(32))) == 32 * 20
    if server.kind != "local_server":
        return
    threads = server.threads()
    port = int(server.rest_url.rsplit(":", 1)[1])
    stalled = []
    for _ in range(200):  # each announces a body it never sends
        connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        connection.sendall(_predict_head(port, "100"))
        stalled.append(connection)
    try:
        started = time.monotonic()
        assert RestClient(server.rest_url, MODEL_NAME, timeout=30).translate(["the cat"])["translation"].shape == (1,)
        assert time.monotonic() - started < 10
        assert server.threads() <= threads
        for length, body, answer in (("abc", b"", b"400"), ("-5", b"", b"400"), ("100", b"{}", b"")):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                connection.sendall(_predict_head(port, length) + body)
                started = time.monotonic()
                reply = connection.recv(4096)  # an answer, or the connection closed after the channel timeout
                assert (answer in reply.split(b"\r\n", 1)[0]) if answer else reply == b"", reply[:200]
                assert time.monotonic() - started < REST_CHANNEL_TIMEOUT + 10
    finally:
        for connection in stalled:
            connection.close()
    assert server.alive()


def test_a_body_over_max_request_bytes_is_refused_in_one_line_naming_size_and_limit(server):
    if server.kind != "local_server":
        pytest.skip("the limit and its message are the local server's (--max_request_bytes)")
    url = f"{server.rest_url}/v1/models/{MODEL_NAME}:predict"
    port = int(server.rest_url.rsplit(":", 1)[1])
    # The refusal comes from Content-Length, before any of the body is read: only the head is sent (a client
    # still sending the body may meet the closed connection before it reads the answer).
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(_predict_head(port, MAX_REQUEST_BYTES + 1))
        reply = b""
        while chunk := connection.recv(4096):
            reply += chunk
    head, answer = reply.split(b"\r\n\r\n", 1)
    assert head.split(b"\r\n", 1)[0].endswith(b"413 Request Entity Too Large")
    assert json.loads(answer) == {"error": f"the request body of {MAX_REQUEST_BYTES + 1} bytes; this server takes "
                                           f"at most {MAX_REQUEST_BYTES} bytes (rnnsearch serve --max_request_bytes)"}
    body = json.dumps({"instances": ["the cat"]})
    status, answer = _post(url, body + " " * (MAX_REQUEST_BYTES - len(body)))  # exactly the limit: served
    assert status == 200, answer
    assert json.loads(answer)["predictions"][0]["translation"]
    assert server.alive()


def _predict_head(port, content_length):
    return (f"POST /v1/models/{MODEL_NAME}:predict HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {content_length}\r\n\r\n").encode("ascii")


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def _post(url, body):
    request = urllib.request.Request(url, data=body.encode("utf-8"), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8")


def test_a_port_in_use_is_named_before_the_model_is_loaded(tmp_path_factory):
    _, export_dir, _ = exported_model(tmp_path_factory)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"--rest_api_port={port}: cannot listen on 127.0.0.1:{port} \(Address already"):
            check_port("127.0.0.1", port, "--rest_api_port")
        check_port("127.0.0.1", 0, "--port")  # any free port
        refused = preimported.run(
            [sys.executable, "-m", "rnnsearch_tf.cli.main", "serve", f"--model_base_path={export_dir}", f"--port={port}"],
            cwd=REPO_ROOT, capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), timeout=120,
        )
    assert refused.returncode == 1, refused.stderr[-2000:]
    assert refused.stderr.strip().endswith(f"error: --port={port}: cannot listen on 127.0.0.1:{port} (Address already in "
                                           "use); give another port")
    assert "warmed up" not in refused.stderr  # refused before loading the export
    check_port("127.0.0.1", port, "--port")  # free again


def _no_version_server(host="127.0.0.1"):
    """A LocalServer with REST of a model without any version: what is answered before a model is reached."""
    return LocalServer(ModelManager([ServedModel(MODEL_NAME)], 0), host=host, rest_api_port=0).start()


def test_a_host_of_two_addresses_is_served_on_both_at_one_port(monkeypatch):
    """`--host=localhost` where localhost resolves to ::1 and 127.0.0.1 (as getaddrinfo answers on such a machine):
    the REST port is bound on both addresses at one port, and both answer."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    resolve = socket.getaddrinfo

    def both_addresses(host, *args, **kwargs):
        names = ("::1", "127.0.0.1") if host == "localhost" else (host,)
        return [entry for name in names for entry in resolve(name, *args, **kwargs)]

    monkeypatch.setattr(socket, "getaddrinfo", both_addresses)
    server = _no_version_server("localhost")
    try:
        for address in ("127.0.0.1", "[::1]"):
            status, answer = _get(f"http://{address}:{server.rest_api_port}/v1/models/{MODEL_NAME}")
            assert status == 404 and "Could not find any versions of model rnnsearch" in answer, (address, answer)
        assert _get(server.page_url)[0] == 200
    finally:
        server.stop()


@pytest.mark.parametrize("host, url", [("0.0.0.0", "http://127.0.0.1:8501/"), ("::", "http://[::1]:8501/"),
                                       ("localhost", "http://localhost:8501/"), ("10.1.2.3", "http://10.1.2.3:8501/")])
def test_the_page_url_printed_is_one_the_host_check_accepts(host, url):
    """A server bound to every address prints the page's loopback address: 0.0.0.0 is no name a browser may use."""
    assert page_url(host, 8501) == url
    guarded = BrowserGuard(RestApp(ModelManager([ServedModel(MODEL_NAME)], 0)), host, port=8501)
    answers = []
    guarded({"PATH_INFO": "/", "REQUEST_METHOD": "GET", "HTTP_HOST": urllib.parse.urlsplit(url).netloc},
            lambda status, headers: answers.append(status))
    assert answers == ["200 OK"]


def test_a_request_waitress_refuses_before_the_application_is_answered_in_json():
    """A malformed Content-Length, refused by waitress' parser before any application runs, is TF Serving's JSON
    error body with waitress' status."""
    server = _no_version_server()
    try:
        for length in ("abc", "-5"):
            with socket.create_connection(("127.0.0.1", server.rest_api_port), timeout=30) as connection:
                connection.sendall(_predict_head(server.rest_api_port, length))
                reply = b""
                while chunk := connection.recv(4096):
                    reply += chunk
            head, body = reply.split(b"\r\n\r\n", 1)
            assert head.split(b"\r\n", 1)[0] == b"HTTP/1.1 400 Bad Request", reply
            assert b"\r\nContent-Type: application/json" in head
            assert json.loads(body) == {"error": "Content-Length is invalid"}
    finally:
        server.stop()


# large: a model trained for the purpose (tests/helpers/trained_toy_model.py) and fresh processes; the parts run in
# the default suite (tests/test_decoding_model.py, the tiny int8 export in tests/test_export.py)
@pytest.mark.large
def test_an_int8_export_is_served_with_its_page_and_translates_as_the_command(trained_toy_model, toy_data,
                                                                              tmp_path_factory, tmp_path):
    export_dir = trained_toy_model_export(tmp_path_factory, trained_toy_model, "int8")  # rnnsearch export --quantize
    by_command = translated(tmp_path_factory, trained_toy_model, toy_data, "int8")  # rnnsearch translate --quantize
    sources = dev_pairs(toy_data)[0][:8]
    server = RunningServer("local_server", export_dir, tmp_path / "server.log")
    try:
        settings = _post(f"{server.rest_url}/v1/models/{MODEL_NAME}:predict",
                         json.dumps({"signature_name": "settings", "inputs": {}}))
        answers = _post(f"{server.rest_url}/v1/models/{MODEL_NAME}:predict",
                        json.dumps({"signature_name": "translate", "instances": [{"text": text} for text in sources]}))
        page = _get(f"{server.rest_url}/")
        languages = _post(f"{server.rest_url}/page/languages", json.dumps({"model": MODEL_NAME}))
    finally:
        server.stop()
    assert settings[0] == 200 and json.loads(settings[1])["outputs"]["quantize"] == "int8"
    assert answers[0] == 200
    assert [answer["translation"] for answer in json.loads(answers[1])["predictions"]] == [
        record["translation"] for record in by_command[:8]]
    assert page[0] == 200 and "<html" in page[1].lower()
    assert json.loads(languages[1]) == {"source": {"code": "en", "name": "English"},
                                        "target": {"code": "fr", "name": "French"}}
