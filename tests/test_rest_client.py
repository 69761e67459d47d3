"""serving/rest_client.py: the requests RestClient sends are TF Serving's REST predict and metadata requests
of what it is given (columnar, UTF-8 text or {"b64": ...}, the model name quoted), its answers are NumPy arrays,
an HTTP error is a RuntimeError with the status and the server's message, and no HTTP answer a ConnectionError.

A recording HTTP server answering as TF Serving documents (none of our code) stands in here; RestClient
against our server over a real export is tests/test_local_server.py and tests/test_servable.py.
"""

import base64
import http.server
import json
import socket
import threading

import numpy as np
import pytest

from serving.rest_client import RestClient

ANSWERS = {  # signature_name -> (status, body) of the recording server; any other signature: its inputs echoed
    "refuse": (400, json.dumps({"error": "text must be a string vector"})),
    "crash": (500, "upstream <b>crashed</b>"),
    "html": (200, "<html>a web server</html>"),
}


class RecordingHandler(http.server.BaseHTTPRequestHandler):
    requests = []

    def _answer(self, status, body):
        payload = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(("POST", self.path, self.headers["Content-Type"], body))
        status, answer = ANSWERS.get(body["signature_name"], (200, json.dumps({"outputs": body["inputs"]})))
        self._answer(status, answer)

    def do_GET(self):
        self.requests.append(("GET", self.path, self.headers["Content-Type"], None))
        self._answer(200, json.dumps({"model_spec": {"name": "rnnsearch", "version": "1"}, "metadata": {}}))

    def log_message(self, *arguments):
        pass


@pytest.fixture(scope="module")
def url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RecordingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"  # a trailing slash, as users paste it
    server.shutdown()
    server.server_close()


@pytest.fixture
def client(url):
    RecordingHandler.requests.clear()
    return RestClient(url, "rnnsearch", timeout=30)


def test_translate_posts_columnar_utf8_text_and_base64_for_other_bytes(client):
    sentences = ["The cat.", "Le café".encode("utf-8"), b"raw \xff bytes"]
    outputs = client.translate(sentences)
    [(method, path, content_type, body)] = RecordingHandler.requests
    assert (method, path, content_type) == ("POST", "/v1/models/rnnsearch:predict", "application/json")
    assert body == {"signature_name": "translate", "inputs": {"text": [
        "The cat.", "Le café", {"b64": base64.b64encode(b"raw \xff bytes").decode("ascii")}]}}
    assert outputs["text"].dtype == object and list(outputs["text"][:2]) == ["The cat.", "Le café"]
    client.translate(["a"], signature_name="serving_default")
    assert RecordingHandler.requests[-1][3]["signature_name"] == "serving_default"


def test_translate_ids_and_score_post_their_signatures_inputs(client):
    outputs = client.translate_ids(np.array([[4, 6, 9], [7, 0, 0]], np.int64))
    assert RecordingHandler.requests[-1][3] == {"signature_name": "translate_ids",
                                                "inputs": {"source_ids": [[4, 6, 9], [7, 0, 0]]}}
    assert outputs["source_ids"].dtype.kind == "i"  # numbers come back as a numeric array
    np.testing.assert_array_equal(outputs["source_ids"], [[4, 6, 9], [7, 0, 0]])
    outputs = client.score(["the cat"], [b"le chat"])
    assert RecordingHandler.requests[-1][3] == {"signature_name": "score",
                                                "inputs": {"source": ["the cat"], "target": ["le chat"]}}
    assert outputs["target"].dtype == object


def test_predict_gives_text_as_object_arrays_and_numbers_as_numbers(client):
    outputs = client.predict({"nbest": [["un chat", "le chat"], ["", "x"]], "score": [-1.5, -0.25], "empty": []})
    assert RecordingHandler.requests[-1][3]["signature_name"] == "serving_default"
    assert outputs["nbest"].dtype == object and outputs["nbest"].shape == (2, 2) and outputs["nbest"][0, 1] == "le chat"
    assert outputs["score"].dtype == np.float64
    np.testing.assert_array_equal(outputs["score"], [-1.5, -0.25])
    assert outputs["empty"].shape == (0,)


def test_metadata_gets_the_models_metadata(client):
    assert client.metadata() == {"model_spec": {"name": "rnnsearch", "version": "1"}, "metadata": {}}
    assert RecordingHandler.requests[-1][:2] == ("GET", "/v1/models/rnnsearch/metadata")


@pytest.mark.parametrize("signature_name, message", [("refuse", "HTTP 400: text must be a string vector"),
                                                     ("crash", "HTTP 500: upstream <b>crashed</b>")])
def test_an_http_error_is_a_runtime_error_with_the_status_and_the_servers_message(client, signature_name, message):
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        client.translate(["a"], signature_name=signature_name)


def test_a_model_name_is_quoted_in_the_path_and_one_a_path_cannot_hold_is_refused(url):
    RecordingHandler.requests.clear()
    RestClient(url, "en fr", timeout=30).metadata()
    assert RecordingHandler.requests[-1][:2] == ("GET", "/v1/models/en%20fr/metadata")
    for name in ("enfr/versions/1", "enfr:predict"):  # would name a version or a method of model "enfr"
        with pytest.raises(ValueError, match="a REST path holds no '/' or ':' in a model name"):
            RestClient(url, name)


@pytest.fixture
def not_http():
    """A port that answers every connection with bytes that are not HTTP/1.1 (a gRPC port's HTTP/2 frames)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.recv(65536)
                connection.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x7f\xff\xff\xff")
                connection.shutdown(socket.SHUT_WR)
                while connection.recv(65536):  # the rest of the request: a socket closed unread sends a reset
                    pass

    threading.Thread(target=answer, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_no_http_answer_is_a_connection_error_and_another_json_a_runtime_error(url, not_http):
    with pytest.raises(ConnectionError, match=r"^no HTTP answer \(BadStatusLine\): is it the REST port, not the gRPC"):
        RestClient(not_http, "rnnsearch", timeout=30).translate(["a"])
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog), never answers
    with silent, pytest.raises(ConnectionError, match=r"^no answer within 0.5 s$"):
        RestClient(f"http://127.0.0.1:{silent.getsockname()[1]}", "rnnsearch", timeout=0.5).translate(["a"])
    with pytest.raises(RuntimeError, match=r"^the answer is not JSON \(b'<html>.*is it TF Serving's REST port\?$"):
        RestClient(url, "rnnsearch", timeout=30).translate(["a"], signature_name="html")
