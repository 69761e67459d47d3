"""A client of TensorFlow Serving's REST API (port 8501 by default), for hosts without gRPC access."""

import base64
import http.client
import json
import urllib.error
import urllib.parse
import urllib.request

import numpy as np


class RestClient:
    """Calls the signatures of one served model with `POST /v1/models/<name>:predict` (columnar format).

    Strings go as UTF-8 text; bytes that are not valid UTF-8 go as `{"b64": ...}`. Outputs come back as
    NumPy arrays (strings as Python `str`).

    Args:
        url: e.g. "http://localhost:8501".
        model_name: the served model's name.
        timeout: seconds per request.

    Raises (from every call): `RuntimeError` with the HTTP status and the server's error message, or where the
    answer is not TF Serving's JSON; `ConnectionError` where no HTTP answer comes (nothing listens there, another
    protocol answers, e.g. the gRPC port, or none within `timeout`). `ValueError` at construction for a model name
    that a REST path cannot hold ('/' or ':' would be read as a version or a method).

    Example:
    >>> RestClient("http://localhost:8501", "rnnsearch").translate(["A sentence."])["translation"]
    array(['Une phrase.'], dtype=object)
    """

    def __init__(self, url, model_name, timeout=60.0):
        if "/" in model_name or ":" in model_name:
            raise ValueError(f"model name {model_name!r}: a REST path holds no '/' or ':' in a model name")
        self.url = url.rstrip("/")
        self.model_name = model_name
        self.timeout = timeout

    def _request(self, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            f"{self.url}/v1/models/{urllib.parse.quote(self.model_name, safe='')}{path}",
            data=data,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = response.read()
        except urllib.error.HTTPError as error:
            message = error.read().decode("utf-8", errors="replace")
            try:
                message = json.loads(message).get("error", message)
            except (json.JSONDecodeError, AttributeError):
                pass
            raise RuntimeError(f"HTTP {error.code}: {message}") from error
        except urllib.error.URLError as error:
            raise ConnectionError(f"{error.reason} (is a model server running there?)") from None
        except TimeoutError:
            raise ConnectionError(f"no answer within {self.timeout} s") from None
        except (http.client.HTTPException, OSError) as error:  # e.g. the HTTP/2 frames of a gRPC port (shown: no)
            detail = type(error).__name__ if isinstance(error, http.client.HTTPException) else error
            raise ConnectionError(f"no HTTP answer ({detail}): is it the REST port, not the gRPC one?") from None
        try:
            return json.loads(answer)
        except ValueError:
            raise RuntimeError(f"the answer is not JSON ({answer[:80]!r}); is it TF Serving's REST port?") from None

    def predict(self, inputs, signature_name="serving_default"):
        """{input name: JSON-able value} -> {output name: NumPy array} of one signature."""
        outputs = self._request(":predict", {"signature_name": signature_name, "inputs": inputs})["outputs"]
        return {
            name: np.array(value, dtype=object if _holds_text(value) else None) for name, value in outputs.items()
        }

    def translate(self, sentences, signature_name="translate"):
        return self.predict({"text": [_to_json_string(sentence) for sentence in sentences]}, signature_name)

    def translate_ids(self, source_ids):
        return self.predict({"source_ids": np.asarray(source_ids, dtype=np.int32).tolist()}, "translate_ids")

    def score(self, sources, targets):
        return self.predict(
            {"source": [_to_json_string(s) for s in sources], "target": [_to_json_string(t) for t in targets]},
            "score",
        )

    def metadata(self):
        return self._request("/metadata")


def _to_json_string(sentence):
    if isinstance(sentence, str):
        return sentence
    try:
        return sentence.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(sentence).decode("ascii")}


def _holds_text(value):
    while isinstance(value, list) and value:
        value = value[0]
    return isinstance(value, str)
