"""serving/request_status.py: one table from a failure to its gRPC code and REST status."""

import grpc
import pytest
import tensorflow as tf

from serving.http_messages import STATUS_TEXT
from serving.request_status import ServableNotFound, error_message, grpc_code, http_status

# tensorflow/serving's ToHTTPStatusCode (tensorflow_serving/model_servers/http_server.cc), code by code.
TF_SERVING_HTTP_STATUS = {
    "OK": 200, "CANCELLED": 499, "UNKNOWN": 500, "INVALID_ARGUMENT": 400, "DEADLINE_EXCEEDED": 504, "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409, "PERMISSION_DENIED": 403, "RESOURCE_EXHAUSTED": 429, "FAILED_PRECONDITION": 400,
    "ABORTED": 409, "OUT_OF_RANGE": 400, "UNIMPLEMENTED": 501, "INTERNAL": 500, "UNAVAILABLE": 503,
    "DATA_LOSS": 500, "UNAUTHENTICATED": 401,
}


@pytest.mark.parametrize("error, code, status, message", [
    (ValueError("input 'text' holds 2000 sentences"), grpc.StatusCode.INVALID_ARGUMENT, 400,
     "input 'text' holds 2000 sentences"),
    (RecursionError("too deep"), grpc.StatusCode.INVALID_ARGUMENT, 400, "too deep"),
    (ServableNotFound("Servable not found for request: Latest(x)"), grpc.StatusCode.NOT_FOUND, 404,
     "Servable not found for request: Latest(x)"),
    (tf.errors.InvalidArgumentError(None, None, "vocabulary ids"), grpc.StatusCode.INVALID_ARGUMENT, 400,
     "vocabulary ids"),
    (tf.errors.UnavailableError(None, None, "the batch queue is full"), grpc.StatusCode.UNAVAILABLE, 503,
     "the batch queue is full"),
    (tf.errors.ResourceExhaustedError(None, None, "out of memory"), grpc.StatusCode.RESOURCE_EXHAUSTED, 429,
     "out of memory"),
    (RuntimeError("disk on fire"), grpc.StatusCode.INTERNAL, 500, "RuntimeError: disk on fire"),
])
def test_each_failure_has_one_code_status_and_message(error, code, status, message):
    assert grpc_code(error) == code
    assert http_status(code) == status
    assert error_message(error) == message


def test_every_code_has_tf_servings_http_status_and_its_status_line():
    assert {code.name: http_status(code) for code in grpc.StatusCode} == TF_SERVING_HTTP_STATUS
    for code in grpc.StatusCode:
        assert STATUS_TEXT[http_status(code)].startswith(f"{http_status(code)} ")
