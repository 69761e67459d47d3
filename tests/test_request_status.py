"""serving/request_status.py: one table from a failure to its gRPC code and REST status."""

import grpc
import pytest
import tensorflow as tf

from serving.request_status import ServableNotFound, error_message, grpc_code, http_status


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
    (tf.errors.ResourceExhaustedError(None, None, "out of memory"), grpc.StatusCode.RESOURCE_EXHAUSTED, 413,
     "out of memory"),
    (RuntimeError("disk on fire"), grpc.StatusCode.INTERNAL, 500, "RuntimeError: disk on fire"),
])
def test_each_failure_has_one_code_status_and_message(error, code, status, message):
    assert grpc_code(error) == code
    assert http_status(code) == status
    assert error_message(error) == message
