"""How a failed request is answered over either API: one table from an exception to TF Serving's gRPC status
code and the REST status of the same failure, so that the two APIs and the metrics agree."""

import grpc
import tensorflow as tf

# tf.errors codes are the gRPC status codes, by number.
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
# The HTTP status TF Serving's REST API answers for each gRPC status code: `ToHTTPStatusCode` in tensorflow/serving's
# `tensorflow_serving/model_servers/http_server.cc` (its names in `util/net_http/server/public/response_code_enum.h`).
_HTTP_STATUS = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,  # CLIENT_CLOSED_REQUEST (Nginx's)
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}


class ServableNotFound(LookupError):
    """A request for a model or version this server does not serve (gRPC NOT_FOUND, REST 404)."""


def grpc_code(error):
    """The `grpc.StatusCode` a request that raised `error` is answered with: a `ValueError` is the caller's
    mistake (INVALID_ARGUMENT), a TensorFlow error keeps its code, `ServableNotFound` is NOT_FOUND, anything
    else INTERNAL."""
    if isinstance(error, ServableNotFound):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(error, (ValueError, RecursionError, OverflowError)):
        return grpc.StatusCode.INVALID_ARGUMENT
    if isinstance(error, tf.errors.OpError):
        return _STATUS_CODES.get(error.error_code, grpc.StatusCode.INTERNAL)
    return grpc.StatusCode.INTERNAL


def http_status(code):
    """The REST status of a `grpc.StatusCode`, TF Serving's."""
    return _HTTP_STATUS[code]


def error_message(error):
    """What the client reads: a TensorFlow error's own message, the type and text of an unexpected failure."""
    if isinstance(error, tf.errors.OpError):
        return error.message
    if grpc_code(error) == grpc.StatusCode.INTERNAL:
        return f"{type(error).__name__}: {error}"
    return str(error)


def unknown_label(label):
    """The error of a request naming a version label, in TF Serving's words for a label its config does not
    define (this server's configs define none: `serving.model_server_config`)."""
    return ValueError(f"Unrecognized servable version label: {label}")
