"""TensorFlow Serving's REST API (port 8501 style) over one `Servable`: predict and metadata."""

import base64
import http.server
import json
import re

import numpy as np
import tensorflow as tf

_PREDICT_PATH = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?:predict$")
_METADATA_PATH = re.compile(r"^/v1/models/([^/:]+)(?:/versions/(\d+))?/metadata$")


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
            raise ValueError(f"a string input holds {type(item).__name__} {item!r}")

        return np.array(to_bytes(value), dtype=object).reshape(np.shape(value))
    return np.array(value, dtype=dtype.as_numpy_dtype)


def _to_json(array):
    if array.dtype == object:
        return np.vectorize(lambda item: item.decode("utf-8", errors="replace"), otypes=[object])(array).tolist()
    return array.tolist()


class RestRequestHandler(http.server.BaseHTTPRequestHandler):
    """`POST /v1/models/<name>[/versions/<v>]:predict` with `{"signature_name", "inputs"}` (columnar
    format) -> `{"outputs": {...}}`, and `GET /v1/models/<name>/metadata`; errors are `{"error": ...}`
    with status 400 (bad request), 404 (unknown model), 413 (too large) or 500.

    The server object must carry `servable` (a `Servable`) and `max_request_bytes`.
    """

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        del format, args  # requests are not logged

    def _reply(self, status, body):
        payload = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _model_matches(self, match):
        servable = self.server.servable
        name, version = match.group(1), match.group(2)
        if name != servable.model_name or (version is not None and int(version) != servable.version):
            self._reply(404, {"error": f"Servable not found: {name} (this server has {servable.model_name})"})
            return False
        return True

    def do_GET(self):
        match = _METADATA_PATH.match(self.path)
        if not match:
            self._reply(404, {"error": f"unknown path {self.path}"})
        elif self._model_matches(match):
            servable = self.server.servable
            signatures = {
                name: {
                    "inputs": sorted(signature_def.inputs),
                    "outputs": sorted(signature_def.outputs),
                }
                for name, signature_def in servable.signature_defs.items()
            }
            self._reply(
                200,
                {
                    "model_spec": {"name": servable.model_name, "version": str(servable.version)},
                    "metadata": {"signature_def": {"signature_def": signatures}},
                },
            )

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.server.max_request_bytes:
            self.close_connection = True
            self._reply(413, {"error": f"request of {length} bytes exceeds {self.server.max_request_bytes}"})
            return
        body = self.rfile.read(length)
        match = _PREDICT_PATH.match(self.path)
        if not match:
            self._reply(404, {"error": f"unknown path {self.path}"})
            return
        if not self._model_matches(match):
            return
        servable = self.server.servable
        try:
            request = json.loads(body)
            if not isinstance(request, dict) or not isinstance(request.get("inputs"), dict):
                raise ValueError('the body must be {"signature_name": ..., "inputs": {name: value}}')
            signature_name = request.get("signature_name", "")
            specs = servable.input_specs(signature_name or tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY)
            inputs = {
                name: _from_json(value, specs[name].dtype if name in specs else tf.string)
                for name, value in request["inputs"].items()
            }
            outputs = servable.predict(signature_name, inputs)
        except (ValueError, tf.errors.InvalidArgumentError) as error:
            self._reply(400, {"error": getattr(error, "message", str(error))})
            return
        except Exception as error:  # the server outlives any failure of one request
            self._reply(500, {"error": f"{type(error).__name__}: {error}"})
            return
        self._reply(200, {"outputs": {name: _to_json(value) for name, value in outputs.items()}})
