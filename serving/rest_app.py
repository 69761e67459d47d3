"""TensorFlow Serving's REST API (port 8501 style) over the models of a `ModelManager`, as a WSGI application.

Served by waitress (`serving/local_server.py`): it reads each request whole before a worker thread sees
it, so slow or stalled clients cost a socket, not a thread; malformed `Content-Length` headers and
bodies over the limit are answered by waitress itself (400 / 413, with the JSON error body).

Endpoints and formats as TF Serving documents them (https://www.tensorflow.org/tfx/serving/api_rest):
- `GET /v1/models/<name>[/versions/<v>]`: model status, `{"model_version_status": [...]}` (each version's
  state: LOADING, AVAILABLE, UNLOADING, END);
- `GET /v1/models/<name>[/versions/<v>]/metadata`: `{"model_spec": ..., "metadata": {"signature_def": ...}}`;
- `POST /v1/models/<name>[/versions/<v>]:predict` with `{"signature_name", "inputs"}` (columnar:
  answered `{"outputs": ...}`, TF Serving's padded tensors) or `{"signature_name", "instances"}` (row: answered
  `{"predictions": [...]}`, each trimmed to its own length: `serving.instance_rows`). The version that
  answered is the `X-Model-Version` header (TF Serving's body has no place for it).
- `GET` of the `MonitoringConfig`'s path (`/monitoring/prometheus/metrics`) when metrics are on: the
  server's metrics in Prometheus' text format (`serving/metrics.py`).
Errors are `{"error": "..."}` with TF Serving's HTTP status of their gRPC code (`serving.request_status.http_status`:
400 bad request, 404 unknown model, version or path, 429 out of memory, 503 the batch queue is full: retry later, 500
...). `GET /` is the translation page (`serving/page.py`).
"""

import base64
import json
import re
import time

import numpy as np
import tensorflow as tf
from google.protobuf import json_format

from serving.http_messages import STATUS_TEXT, request_body
from serving.instance_rows import rows_of_outputs, to_json
from serving.metrics import CONTENT_TYPE, ServerMetrics
from serving.model_service import model_status_json
from serving.page import Page
from serving.request_status import error_message, grpc_code, http_status, unknown_label

API_PREFIX = "/v1/"  # TF Serving's REST API: every path of it starts so
_MODEL_PATH = re.compile(rf"^{API_PREFIX}models/([^/:]+)(?:/versions/(\d+)|/labels/([^/:]+))?(/metadata|:predict)?$")


class RequestError(ValueError):
    """A client mistake, answered with `status` and the message."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def _is_b64(item):
    return isinstance(item, dict) and set(item) == {"b64"}


def _check_numbers(value, dtype):
    """RequestError, in TF Serving's words, for a leaf of nested lists `value` that is not a JSON number of
    `dtype`'s kind: an integer input takes integers only, a float input any number (never true/false)."""
    kinds = (int,) if dtype.is_integer else (int, float)
    if isinstance(value, list):
        for item in value:
            _check_numbers(item, dtype)
    elif isinstance(value, bool) or not isinstance(value, kinds):
        raise RequestError(f"JSON Value: {json.dumps(value)} Type: {type(value).__name__} is not of expected type: "
                           f"{dtype.name}")


def _from_json(value, dtype):
    """A JSON input (nested lists; strings, or {"b64": ...} for raw bytes) -> NumPy array of `dtype`."""
    if dtype == tf.string:

        def to_bytes(item):
            if isinstance(item, list):
                return [to_bytes(element) for element in item]
            if _is_b64(item):
                return base64.b64decode(item["b64"])
            if isinstance(item, str):
                return item.encode("utf-8")
            raise RequestError(f"a string input holds {type(item).__name__} {item!r}")

        return np.array(to_bytes(value), dtype=object).reshape(np.shape(value))
    _check_numbers(value, dtype)
    return np.array(value, dtype=dtype.as_numpy_dtype)


def _columns_of_instances(instances, input_names):
    """Row format -> {input name: list of rows}: each instance is a value (one input: a `{"b64": ...}` object
    too) or an object holding exactly the inputs, as TF Serving reads them."""
    if not isinstance(instances, list) or not instances:
        raise RequestError('"instances" must be a non-empty list')
    if len(input_names) == 1 and (not isinstance(instances[0], dict) or _is_b64(instances[0])):
        return {input_names[0]: instances}
    for index, instance in enumerate(instances):
        if not isinstance(instance, dict) or sorted(instance) != input_names:
            raise RequestError(f"Failed to process element: {index} of 'instances' list. JSON object: "
                               f"{json.dumps(instance)[:200]} keys must be equal to: {','.join(input_names)}")
    return {name: [instance[name] for instance in instances] for name in input_names}


class RestApp:
    """WSGI application answering TF Serving's REST API for a `ModelManager` (see the module docstring).

    Args:
        models: the `serving.model_manager.ModelManager` to answer for.
        metrics: `serving.metrics.ServerMetrics` counting each predict request (a new one by default).
        metrics_path: where `GET` answers the metrics (`serving.monitoring_config.prometheus_path`); None:
            nowhere (404, as TF Serving without `--monitoring_config_file`).
    """

    def __init__(self, models, metrics=None, metrics_path=None):
        self.models = models
        self.metrics = metrics or ServerMetrics()
        self.metrics_path = metrics_path
        self.page = Page(models)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if self.page.serves(path):
            return self.page(environ, start_response)
        if self.metrics_path is not None and path == self.metrics_path and environ["REQUEST_METHOD"] == "GET":
            payload = self.metrics.exposition()
            start_response(STATUS_TEXT[200], [("Content-Type", CONTENT_TYPE), ("Content-Length", str(len(payload)))])
            return [payload]
        headers = []
        try:
            status, body, version = self._route(environ)
            if version is not None:
                headers.append(("X-Model-Version", str(version)))
        except RequestError as error:
            status, body = error.status, {"error": str(error)}
        except Exception as error:  # the server outlives any failure of one request
            status, body = http_status(grpc_code(error)), {"error": error_message(error)}
        payload = json.dumps(body).encode("utf-8")
        start_response(STATUS_TEXT[status], [("Content-Type", "application/json"),
                                             ("Content-Length", str(len(payload))), *headers])
        return [payload]

    def _route(self, environ):
        """(HTTP status, JSON body, version that answered or None) of one API request."""
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        match = _MODEL_PATH.match(path)
        if not match:
            raise RequestError(f"unknown path {path}; see /v1/models/{self.models.default_model_name}", 404)
        name, version = match.group(1), None if match.group(2) is None else int(match.group(2))
        action = match.group(4) or ""
        if match.group(3) is not None:
            raise RequestError(str(unknown_label(match.group(3))))
        expected = "POST" if action == ":predict" else "GET"
        if method != expected:
            raise RequestError(f"{path} takes {expected}, not {method}", 405)
        if action == ":predict":
            return self._timed_predict(name, version, request_body(environ))
        model = self.models.model(name)
        if action == "/metadata":
            with model.servable(version) as servable:
                return 200, _metadata(model.name, servable), servable.version
        return 200, model_status_json(model, version), None

    def _timed_predict(self, name, version, body):
        """`_predict` of model `name`, counted in the metrics with its outcome."""
        started, signature_name, answered, signatures = time.perf_counter(), "", None, ()
        try:
            request = _parse_predict_request(body)
            signature_name = request.get("signature_name") or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY
            with self.models.model(name).servable(version) as servable:
                answered, signatures = servable.version, servable.signature_defs
                answer = _predict(servable, signature_name, request)
        except Exception as error:
            self.metrics.record_request(name, answered, signature_name, "REST", grpc_code(error).name,
                                        time.perf_counter() - started, signatures=signatures,
                                        served_models=self.models.models)
            raise
        self.metrics.record_request(name, answered, signature_name, "REST", "OK", time.perf_counter() - started)
        return 200, answer, answered


def _metadata(model_name, servable):
    signatures = {
        name: json_format.MessageToDict(signature_def, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
        for name, signature_def in servable.signature_defs.items()
    }
    return {
        "model_spec": {"name": model_name, "signature_name": "", "version": str(servable.version)},
        "metadata": {"signature_def": {"signature_def": signatures}},
    }


def _parse_predict_request(body):
    try:
        request = json.loads(body)
    except json.JSONDecodeError as error:
        raise RequestError(f"the body is not JSON: {error}") from error
    if not isinstance(request, dict) or ("inputs" in request) == ("instances" in request):
        raise RequestError('the body must be {"signature_name": ..., "inputs": ...} or {..., "instances": [...]}')
    if not isinstance(request.get("signature_name", ""), str):
        raise RequestError("'signature_name' key must be a string value.")
    return request


def _predict(servable, signature_name, request):
    """The answer of one parsed predict request in its format: `{"predictions": [...]}` for "instances"
    (each row trimmed to its own length), `{"outputs": {...}}` for "inputs"."""
    specs = servable.input_specs(signature_name)
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
    outputs = servable.predict(signature_name, inputs)
    if "instances" in request:
        return {"predictions": rows_of_outputs(outputs)}
    return {"outputs": {name: to_json(value) for name, value in outputs.items()}}
