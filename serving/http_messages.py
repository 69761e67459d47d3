"""What the two WSGI applications of the REST port (`RestApp`, the page's `Page`) share: status lines, the
request body, the error body."""

import http
import json

# The status line of every HTTP status (Python's phrases), and Nginx's 499 that TF Serving answers for CANCELLED.
STATUS_TEXT = {status.value: f"{status.value} {status.phrase}" for status in http.HTTPStatus}
STATUS_TEXT[499] = "499 Client Closed Request"


def request_body(environ):
    """The request's body as bytes (`CONTENT_LENGTH` bytes; waitress has read and bounded it)."""
    return environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))


def json_body(environ):
    """The request's body parsed as JSON (ValueError if it is not JSON)."""
    return json.loads(request_body(environ))


def error_body(message):
    """`{"error": message}` as UTF-8 JSON, TF Serving's error body."""
    return json.dumps({"error": message}).encode("utf-8")
