"""TensorFlow Serving's REST API (port 8501 style) over one `Servable`, as a WSGI application.

Served by waitress (`serving/local_server.py`): it reads each request whole before a worker thread sees
it, so slow or stalled clients cost a socket, not a thread; malformed `Content-Length` headers and
bodies over the limit are answered by waitress itself (400 / 413).

Endpoints and formats as TF Serving documents them (https://www.tensorflow.org/tfx/serving/api_rest):
- `GET /v1/models/<name>[/versions/<v>]`: model status, `{"model_version_status": [...]}`;
- `GET /v1/models/<name>[/versions/<v>]/metadata`: `{"model_spec": ..., "metadata": {"signature_def": ...}}`;
- `POST /v1/models/<name>[/versions/<v>]:predict` with `{"signature_name", "inputs"}` (columnar:
  answered `{"outputs": ...}`) or `{"signature_name", "instances"}` (row: answered `{"predictions": [...]}`).
Errors are `{"error": "..."}` with 400 (bad request), 404 (unknown model, version or path), 503 (the
batch queue is full: retry later) or 500. `GET /` is the translation page (`serving/page.py`).
"""

import base64
import json
import re

import numpy as np
import tensorflow as tf
from google.protobuf import json_format

from serving.http_messages import STATUS_TEXT, request_body
from serving.page import Page

_MODEL_PATH = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?(/metadata|:predict)?$")


class RequestError(ValueError):
    """A client mistake, answered with `status` and the message."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def _from_json(value, dtype):
    """A JSON input (nested lists; strings, or {"b64": ...} for raw bytes) -> NumPy array of `dtype`."""
    if dtype == tf.string:

        def to_bytes(item):
            if isinstance(item, list):
                return [to_bytes(element) for element in item]
            if isinstance(item, dict) and set(item) == {"b64"}:
                return base64.b64decode(item["b64"])
            if isinstance(item, str):
                return item.encode("utf-8")
            raise RequestError(f"a string input holds {type(item).__name__} {item!r}")

        return np.array(to_bytes(value), dtype=object).reshape(np.shape(value))
    return np.array(value, dtype=dtype.as_numpy_dtype)


def _to_json(array):
    if isinstance(array, bytes):  # a scalar string output, e.g. of `settings`
        return array.decode("utf-8", errors="replace")
    if array.dtype == object:
        return np.vectorize(lambda item: item.decode("utf-8", errors="replace"), otypes=[object])(array).tolist()
    return array.tolist()


def _columns_of_instances(instances, input_names):
    """Row format -> {input name: list of rows}: each instance is a value (one input) or a dict of inputs."""
    if not isinstance(instances, list) or not instances:
        raise RequestError('"instances" must be a non-empty list')
    if len(input_names) == 1 and not isinstance(instances[0], dict):
        return {input_names[0]: instances}
    if not all(isinstance(instance, dict) for instance in instances):
        raise RequestError(f"each instance must be an object with the inputs {input_names}")
    return {name: [instance.get(name) for instance in instances] for name in input_names}


def _rows_of_outputs(outputs):
    """{output name: array of rows} -> TF Serving's predictions: a list of rows (dicts when several outputs)."""
    columns = {name: _to_json(value) for name, value in outputs.items()}
    if len(columns) == 1:
        return next(iter(columns.values()))
    rows = len(next(iter(columns.values())))
    return [{name: column[row] for name, column in columns.items()} for row in range(rows)]


class RestApp:
    """WSGI application answering TF Serving's REST API for one `Servable` (see the module docstring)."""

    def __init__(self, servable):
        self.servable = servable
        self.page = Page(servable)

    def __call__(self, environ, start_response):
        if self.page.serves(environ.get("PATH_INFO", "")):
            return self.page(environ, start_response)
        try:
            status, body = self._route(environ)
        except RequestError as error:
            status, body = error.status, {"error": str(error)}
        except (ValueError, RecursionError, OverflowError, tf.errors.InvalidArgumentError) as error:
            status, body = 400, {"error": getattr(error, "message", None) or str(error)}
        except tf.errors.UnavailableError as error:
            status, body = 503, {"error": error.message}
        except Exception as error:  # the server outlives any failure of one request
            status, body = 500, {"error": f"{type(error).__name__}: {error}"}
        payload = json.dumps(body).encode("utf-8")
        start_response(
            STATUS_TEXT[status], [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))]
        )
        return [payload]

    def _route(self, environ):
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        match = _MODEL_PATH.match(path)
        if not match:
            raise RequestError(f"unknown path {path}; see /v1/models/{self.servable.model_name}", 404)
        self._check_model(match.group(1), match.group(2))
        action = match.group(3) or ""
        expected = "POST" if action == ":predict" else "GET"
        if method != expected:
            raise RequestError(f"{path} takes {expected}, not {method}", 405)
        if action == ":predict":
            return 200, self._predict(request_body(environ))
        if action == "/metadata":
            return 200, self._metadata()
        return 200, self._status()

    def _check_model(self, name, version):
        servable = self.servable
        if name != servable.model_name:
            raise RequestError(f"Servable not found for request: Latest({name}); this server has "
                               f"{servable.model_name}", 404)
        if version is not None and int(version) != servable.version:
            raise RequestError(f"Servable not found for request: Specific({name}, {version}); this server has "
                               f"version {servable.version}", 404)

    def _status(self):
        return {
            "model_version_status": [
                {
                    "version": str(self.servable.version),
                    "state": "AVAILABLE",
                    "status": {"error_code": "OK", "error_message": ""},
                }
            ]
        }

    def _metadata(self):
        signatures = {
            name: json_format.MessageToDict(signature_def, preserving_proto_field_name=True)
            for name, signature_def in self.servable.signature_defs.items()
        }
        return {
            "model_spec": {"name": self.servable.model_name, "signature_name": "",
                           "version": str(self.servable.version)},
            "metadata": {"signature_def": {"signature_def": signatures}},
        }

    def _predict(self, body):
        try:
            request = json.loads(body)
        except json.JSONDecodeError as error:
            raise RequestError(f"the body is not JSON: {error}") from error
        if not isinstance(request, dict) or ("inputs" in request) == ("instances" in request):
            raise RequestError('the body must be {"signature_name": ..., "inputs": ...} or {..., "instances": [...]}')
        signature_name = request.get("signature_name") or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        specs = self.servable.input_specs(signature_name)
        if "instances" in request:
            columns = _columns_of_instances(request["instances"], sorted(specs))
        elif isinstance(request["inputs"], dict):
            columns = request["inputs"]
        elif len(specs) == 1:
            columns = {next(iter(specs)): request["inputs"]}
        else:
            raise RequestError(f'"inputs" must name the inputs {sorted(specs)}')
        inputs = {name: _from_json(value, specs[name].dtype if name in specs else tf.string)
                  for name, value in columns.items()}
        outputs = self.servable.predict(signature_name, inputs)
        if "instances" in request:
            return {"predictions": _rows_of_outputs(outputs)}
        return {"outputs": {name: _to_json(value) for name, value in outputs.items()}}
