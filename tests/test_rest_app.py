"""serving/rest_app.py: RestApp called as a WSGI application over a real Servable of the tiny export, alone
and behind the `BrowserGuard` the local server puts in front of it.

The same API through real servers, and against `tensorflow_model_server`, is tests/test_local_server.py.
"""

import base64
import io
import json
import re

import numpy as np
import pytest
import tensorflow as tf

from serving.browser_guard import BrowserGuard
from serving.model_manager import ModelManager
from serving.rest_app import RestApp
from serving.servable import Servable
from helpers.serving_test_utils import SENTENCES, exported_model

MODEL = "/v1/models/rnnsearch"


@pytest.fixture(scope="module")
def servable(tmp_path_factory):
    return Servable(exported_model(tmp_path_factory)[1], "rnnsearch")


@pytest.fixture(scope="module")
def rest_app(servable):
    return RestApp(ModelManager.serving(servable))


def call(rest_app, method, path, body=None, headers=None):
    """(status code, decoded JSON answer) of one request; `body` is a JSON value or raw bytes, `headers` more
    WSGI environ entries (`HTTP_HOST`, `CONTENT_TYPE`, ...)."""
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode("utf-8")
    body = body or b""
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "CONTENT_LENGTH": str(len(body)),
               "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", **(headers or {})}
    started = {}

    def start_response(status, headers):
        started.update(status=status, headers=dict(headers))

    payload = b"".join(rest_app(environ, start_response))
    assert started["headers"]["Content-Type"] == "application/json"
    assert int(started["headers"]["Content-Length"]) == len(payload)
    return int(started["status"].split()[0]), json.loads(payload)


def test_model_status_of_the_newest_version(rest_app):
    for path in (MODEL, f"{MODEL}/versions/1"):
        status, answer = call(rest_app, "GET", path)
        assert status == 200
        assert answer == {"model_version_status": [
            {"version": "1", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}]}


def test_metadata_lists_every_signature(rest_app, servable):
    status, answer = call(rest_app, "GET", f"{MODEL}/metadata")
    assert status == 200
    assert answer["model_spec"] == {"name": "rnnsearch", "signature_name": "", "version": "1"}
    signatures = answer["metadata"]["signature_def"]["signature_def"]
    assert sorted(signatures) == sorted(servable.signature_defs)
    assert {"score", "serving_default", "settings", "translate", "translate_ids"} <= set(signatures)
    assert signatures["translate"]["inputs"]["text"]["dtype"] == "DT_STRING"
    assert signatures["translate_ids"]["inputs"]["source_ids"]["dtype"] == "DT_INT32"
    assert {"translation", "score", "alignment"} <= set(signatures["translate"]["outputs"])


def test_columnar_predict_equals_the_servable(rest_app, servable):
    expected = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES], object)})
    for inputs in ({"text": SENTENCES}, SENTENCES):  # one input may be given without its name
        status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"signature_name": "translate", "inputs": inputs})
        assert status == 200
        outputs = answer["outputs"]
        assert sorted(outputs) == sorted(expected)
        assert outputs["translation"] == [text.decode("utf-8") for text in expected["translation"]]
        np.testing.assert_allclose(outputs["score"], expected["score"], rtol=1e-6)
        np.testing.assert_allclose(outputs["alignment"], expected["alignment"], rtol=1e-6)
    raw = {"b64": base64.b64encode(SENTENCES[0].encode("utf-8")).decode("ascii")}
    status, answer = call(rest_app, "POST", f"{MODEL}/versions/1:predict", {"inputs": {"text": [raw]}})
    assert status == 200 and answer["outputs"]["translation"] == [expected["translation"][0].decode("utf-8")]


def test_row_predict_answers_a_prediction_per_instance(rest_app, servable):
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"instances": SENTENCES[:2]})  # serving_default
    expected = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES[:2]], object)})
    assert status == 200 and len(answer["predictions"]) == 2
    for row, prediction in enumerate(answer["predictions"]):
        assert sorted(prediction) == sorted(expected)
        assert prediction["translation"] == expected["translation"][row].decode("utf-8")
        tokens = [token.decode("utf-8") for token in expected["tokens"][row] if token]
        source_tokens = [token.decode("utf-8") for token in expected["source_tokens"][row] if token]
        assert prediction["tokens"] == tokens and tokens[-1] == "</s>"  # no "" after </s>
        assert prediction["source_tokens"] == source_tokens
        np.testing.assert_allclose(prediction["alignment"],  # no rows or columns of zeros: [tgt_len, src_len]
                                   expected["alignment"][row, : len(tokens), : len(source_tokens)], rtol=1e-6)
        np.testing.assert_allclose(np.sum(prediction["alignment"], axis=1), 1.0, rtol=1e-5)
        assert [len(hypothesis) for hypothesis in prediction["nbest_tokens"]] == [
            sum(1 for token in hypothesis if token) for hypothesis in expected["nbest_tokens"][row]]
        np.testing.assert_allclose(prediction["nbest_alignment"][0], expected["nbest_alignment"][row, 0][
            : len(prediction["nbest_tokens"][0]), : len(source_tokens)], rtol=1e-6)
    _, columnar = call(rest_app, "POST", f"{MODEL}:predict", {"inputs": SENTENCES[:2]})
    assert len(columnar["outputs"]["tokens"][0]) == len(columnar["outputs"]["tokens"][1])  # padded as TF Serving's
    for sentence, prediction in zip(SENTENCES[:2], answer["predictions"]):  # each row as if it were alone
        _, alone = call(rest_app, "POST", f"{MODEL}:predict", {"instances": [sentence]})
        assert alone["predictions"][0]["tokens"] == prediction["tokens"]
        np.testing.assert_allclose(alone["predictions"][0]["alignment"], prediction["alignment"], rtol=1e-5, atol=1e-6)
    pairs = [{"source": "the cat", "target": "le chat"}, {"source": "a dog", "target": ""}]
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"signature_name": "score", "instances": pairs})
    scored = servable.predict("score", {"source": np.array([b"the cat", b"a dog"], object),
                                        "target": np.array([b"le chat", b""], object)})
    assert status == 200
    np.testing.assert_allclose([row["log_prob"] for row in answer["predictions"]], scored["log_prob"], rtol=1e-6)
    for row, prediction in enumerate(answer["predictions"]):
        assert len(prediction["token_log_probs"]) == len(prediction["tokens"]) == sum(
            1 for token in scored["tokens"][row] if token)
    status, answer = call(rest_app, "POST", f"{MODEL}:predict",
                          {"signature_name": "translate_ids", "instances": [[4, 6, 9, 0], [7, 0, 0, 0]]})
    ids = servable.predict("translate_ids", {"source_ids": np.array([[4, 6, 9, 0], [7, 0, 0, 0]], np.int32)})
    assert status == 200
    for row, prediction in enumerate(answer["predictions"]):
        target_ids = [int(value) for value in ids["target_ids"][row] if value]
        assert prediction["target_ids"] == target_ids
        assert np.shape(prediction["alignment"]) == (len(target_ids), [4, 2][row])  # source ids and </s>


def test_row_predict_answers_each_tokens_probability_trimmed_to_its_tokens(rest_app, servable):
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"instances": SENTENCES[:3]})
    expected = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES[:3]], object)})
    assert status == 200
    for row, prediction in enumerate(answer["predictions"]):
        length = len(prediction["tokens"])
        np.testing.assert_allclose(prediction["token_probabilities"], expected["token_probabilities"][row, :length],
                                   rtol=1e-6)
        assert 0.0 < min(prediction["token_probabilities"]) and max(prediction["token_probabilities"]) <= 1.0
        np.testing.assert_allclose(prediction["mean_log_prob"], np.mean(np.log(prediction["token_probabilities"])),
                                   atol=1e-5)
        assert [len(values) for values in prediction["nbest_token_probabilities"]] == [
            len(tokens) for tokens in prediction["nbest_tokens"]]
        np.testing.assert_allclose(prediction["nbest_mean_log_probs"], expected["nbest_mean_log_probs"][row], rtol=1e-6)


def test_row_predict_of_translate_constrained_puts_each_phrase_in_the_translation(rest_app, servable):
    plain = servable.predict("translate", {"text": np.array([s.encode() for s in SENTENCES[:2]], object)})
    assert b"chien" not in list(plain["tokens"][0])  # the model would not say it on its own
    instances = [{"text": SENTENCES[0], "constraints": ["chien", ""]}, {"text": SENTENCES[1], "constraints": ["", ""]}]
    status, answer = call(rest_app, "POST", f"{MODEL}:predict",
                          {"signature_name": "translate_constrained", "instances": instances})
    assert status == 200
    constrained, free = answer["predictions"]
    assert "chien" in constrained["tokens"] and "chien" in constrained["translation"].split()
    assert constrained["constraints_met"] == [True, False] and constrained["constraints_skipped"] == [False, True]
    assert free["translation"] == plain["translation"][1].decode("utf-8")  # no phrase: translate's answer
    assert free["constraints_met"] == [False, False] and free["constraints_skipped"] == [True, True]


def test_the_settings_signature_answers_its_scalars(rest_app, servable):
    expected = servable.predict("settings", {})
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"signature_name": "settings", "inputs": {}})
    assert status == 200 and sorted(answer["outputs"]) == sorted(expected)
    assert answer["outputs"]["target_language"] == "fr" and answer["outputs"]["beam_size"] == 3
    assert answer["outputs"]["checkpoint"] == expected["checkpoint"].decode("utf-8")


@pytest.mark.parametrize("body, reason", [
    (b"{not json", "not JSON"),
    ({"inputs": {"text": ["a"]}, "instances": ["a"]}, re.escape('"inputs": ...} or')),
    ({"instances": []}, "non-empty list"),
    ({"signature_name": "score", "instances": ["the cat"]},
     re.escape("""element: 0 of 'instances' list. JSON object: "the cat" keys must be equal to: source,target""")),
    ({"signature_name": "translate_prefix", "instances": [{"text": "the cat", "prefix": "le"}, {"text": "a dog"}]},
     re.escape("""element: 1 of 'instances' list. JSON object: {"text": "a dog"} keys must be equal to: """)
     + "prefix,text"),
    ({"instances": [{"text": "the cat", "bogus": 1}]}, re.escape("keys must be equal to: text")),
    ({"signature_name": ["translate"], "instances": ["a"]}, re.escape("'signature_name' key must be a string value.")),
    ({"signature_name": "settings", "instances": [{}]}, "Tensor name: [a-z_]+ has no shape information"),
    ({"signature_name": "score", "inputs": ["the cat"]}, "must name the inputs"),
    ({"signature_name": "no_such_signature", "inputs": {"text": ["a"]}}, "no_such_signature"),
    ({"inputs": {"sentences": ["a"]}}, re.escape("takes inputs ['text']")),
    ({"inputs": {"text": [1, 2]}}, "a string input holds int"),
    ({"inputs": {"text": [["a"]]}}, re.escape("must be string of shape (None,)")),
    ({"signature_name": "translate_ids", "inputs": {"source_ids": [[4, 1000]]}}, "vocabulary ids"),
    ({"signature_name": "translate_ids", "inputs": {"source_ids": [[1e30]]}}, "int"),
    ({"signature_name": "translate_ids", "inputs": {"source_ids": [[4, 5.7]]}},  # never rounded to 5
     re.escape("JSON Value: 5.7 Type: float is not of expected type: int32")),
    ({"signature_name": "translate_ids", "instances": [[4, True]]}, re.escape("JSON Value: true Type: bool")),
    ({"signature_name": "translate_ids", "instances": [[4, "12"]]}, re.escape('JSON Value: "12" Type: str')),
    ({"signature_name": "translate_ids", "instances": [[4, None]]}, re.escape("JSON Value: null")),
    ({"signature_name": "translate_ids", "instances": [[4, {"a": 1}]]}, re.escape('JSON Value: {"a": 1}')),
    (b'{"inputs": {"text": ' + b"[" * 5000 + b"]" * 5000 + b"}}", "RecursionError|recursion"),
])
def test_client_mistakes_are_400_with_the_reason(rest_app, body, reason):
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", body)
    assert status == 400 and re.search(reason, answer["error"]), (status, answer)


def test_a_b64_instance_of_a_one_input_signature_is_its_text(rest_app):
    encoded = [{"b64": base64.b64encode(sentence.encode("utf-8")).decode("ascii")} for sentence in SENTENCES[:2]]
    answers = [call(rest_app, "POST", f"{MODEL}:predict", {"instances": instances})
               for instances in (encoded, SENTENCES[:2], [{"text": sentence} for sentence in SENTENCES[:2]])]
    assert [status for status, _ in answers] == [200, 200, 200]
    assert answers[0][1]["predictions"] == answers[1][1]["predictions"] == answers[2][1]["predictions"]


def test_a_version_label_is_refused_as_tf_serving_refuses_an_unknown_one(rest_app):
    for path in (f"{MODEL}/labels/stable", f"{MODEL}/labels/stable/metadata"):
        status, answer = call(rest_app, "GET", path)
        assert status == 400 and answer == {"error": "Unrecognized servable version label: stable"}
    status, answer = call(rest_app, "POST", f"{MODEL}/labels/stable:predict", {"instances": ["the cat"]})
    assert status == 400 and answer == {"error": "Unrecognized servable version label: stable"}


def test_metadata_prints_the_fields_tf_serving_always_prints(rest_app):
    signatures = call(rest_app, "GET", f"{MODEL}/metadata")[1]["metadata"]["signature_def"]["signature_def"]
    assert signatures["settings"]["outputs"]["beam_size"]["tensor_shape"] == {"dim": [], "unknown_rank": False}
    assert signatures["translate"]["inputs"]["text"]["tensor_shape"] == {
        "dim": [{"size": "-1", "name": ""}], "unknown_rank": False}


def test_a_request_over_the_batch_limit_is_named_in_one_line_before_the_graph_runs(rest_app):
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"] * 10_000})
    assert status == 400 and answer["error"] == (
        "input 'text' holds 10000 sentences; this model takes at most 1000 per request")


def test_unknown_model_version_or_path_is_404_and_a_wrong_method_405(rest_app):
    status, answer = call(rest_app, "GET", "/v1/models/other_model")
    assert status == 404 and "Latest(other_model)" in answer["error"]
    status, answer = call(rest_app, "GET", f"{MODEL}/versions/2/metadata")
    assert status == 404 and "Specific(rnnsearch, 2)" in answer["error"]
    status, answer = call(rest_app, "GET", "/v1/nothing_here")
    assert status == 404 and "unknown path" in answer["error"]
    assert call(rest_app, "GET", f"{MODEL}:predict")[0] == 405
    assert call(rest_app, "POST", f"{MODEL}/metadata", {})[0] == 405


def test_a_failure_of_the_server_is_500_and_the_app_goes_on(rest_app, servable, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(servable, "predict", broken)
    status, answer = call(rest_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"]})
    assert status == 500 and answer["error"] == "RuntimeError: disk on fire"
    monkeypatch.undo()
    assert call(rest_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"]})[0] == 200


@pytest.mark.parametrize("error, status", [
    (tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor with shape[12000,210,100]"), 429),
    (tf.errors.DeadlineExceededError(None, None, "took too long"), 504),
    (tf.errors.UnimplementedError(None, None, "no kernel"), 501),
    (tf.errors.CancelledError(None, None, "cancelled"), 499),
])
def test_a_tensorflow_error_is_answered_with_tf_servings_http_status_in_json(rest_app, servable, monkeypatch, error,
                                                                              status):
    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(servable, "predict", failing)  # the graph failing as TensorFlow reports it
    assert call(rest_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"]}) == (status, {"error": error.message})


CURL_HEADERS = {"HTTP_HOST": "localhost:8501", "HTTP_USER_AGENT": "curl/8.5.0", "HTTP_ACCEPT": "*/*",
                "CONTENT_TYPE": "application/x-www-form-urlencoded"}  # what `curl -d ... -X POST` sends
PAGE_HEADERS = {"HTTP_HOST": "127.0.0.1:8501", "HTTP_ORIGIN": "http://127.0.0.1:8501",
                "HTTP_SEC_FETCH_SITE": "same-origin", "CONTENT_TYPE": "application/json"}  # the server's own page
FOREIGN = "is another site's: requests that run the model come from this server's pages"
MALFORMED_HOST = "is malformed: a Host is a name or address and an optional port (localhost:8501, [::1]:8501)"
MALFORMED_ORIGIN = "is malformed: an Origin is scheme://name[:port] (http://localhost:8501) or null"


@pytest.fixture
def guarded_app(rest_app):
    """`rest_app` behind the `BrowserGuard` of a server serving http on 127.0.0.1:8501."""
    return BrowserGuard(rest_app, "127.0.0.1", port=8501)


def test_tf_servings_documented_curl_request_is_answered_through_the_browser_guard(guarded_app, servable):
    status, answer = call(guarded_app, "POST", f"{MODEL}:predict", b'{"instances": ["the cat", "a dog"]}',
                          CURL_HEADERS)
    expected = servable.predict("translate", {"text": np.array([b"the cat", b"a dog"], object)})
    assert status == 200
    assert [row["translation"] for row in answer["predictions"]] == [
        text.decode("utf-8") for text in expected["translation"]]


def test_a_same_origin_page_request_is_served_through_the_browser_guard(guarded_app, servable):
    status, answer = call(guarded_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"]}, PAGE_HEADERS)
    expected = servable.predict("translate", {"text": np.array([b"the cat"], object)})
    assert status == 200 and answer["predictions"][0]["translation"] == expected["translation"][0].decode("utf-8")


@pytest.mark.parametrize("headers, status, error", [
    ({**PAGE_HEADERS, "HTTP_HOST": "[::1"}, 400, f"Host '[::1' {MALFORMED_HOST}"),
    ({**PAGE_HEADERS, "HTTP_HOST": "evil.com@localhost"}, 400, f"Host 'evil.com@localhost' {MALFORMED_HOST}"),
    ({**PAGE_HEADERS, "HTTP_HOST": "localhost#x"}, 400, f"Host 'localhost#x' {MALFORMED_HOST}"),
    ({**CURL_HEADERS, "HTTP_HOST": "localhost:9999"}, 403,
     "Host 'localhost:9999' names port 9999; this server serves port 8501"),
    ({**PAGE_HEADERS, "HTTP_ORIGIN": "http://localhost:99999"}, 400,
     f"Origin 'http://localhost:99999' {MALFORMED_ORIGIN}"),
    ({**PAGE_HEADERS, "HTTP_ORIGIN": "http://localhost:abc"}, 400, f"Origin 'http://localhost:abc' {MALFORMED_ORIGIN}"),
    ({**PAGE_HEADERS, "HTTP_ORIGIN": "http://[::1:8501"}, 400, f"Origin 'http://[::1:8501' {MALFORMED_ORIGIN}"),
    ({**PAGE_HEADERS, "HTTP_ORIGIN": "https://localhost:8501"}, 403, f"Origin 'https://localhost:8501' {FOREIGN}"),
    ({**PAGE_HEADERS, "HTTP_ORIGIN": "http://evil.example", "HTTP_SEC_FETCH_SITE": "cross-site",
      "CONTENT_TYPE": "text/plain"}, 403, f"Origin 'http://evil.example' {FOREIGN}"),
    ({**CURL_HEADERS, "HTTP_SEC_FETCH_SITE": "cross-site", "CONTENT_TYPE": "text/plain"}, 415,
     "the body must be JSON sent with Content-Type: application/json, not 'text/plain'"),
])
def test_the_browser_guard_answers_malformed_and_foreign_requests_and_runs_nothing(guarded_app, rest_app, headers,
                                                                                   status, error):
    counted = rest_app.metrics.exposition()
    assert call(guarded_app, "POST", f"{MODEL}:predict", {"instances": ["the cat"]}, headers) == (
        status, {"error": error})
    assert rest_app.metrics.exposition() == counted  # no prediction ran
