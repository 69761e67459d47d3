"""What the two WSGI applications of the REST port (`RestApp`, the page's `Page`) share: status lines, the
request body, the error body."""

import json

STATUS_TEXT = {200: "200 OK", 400: "400 Bad Request", 403: "403 Forbidden", 404: "404 Not Found",
               405: "405 Method Not Allowed", 415: "415 Unsupported Media Type", 500: "500 Internal Server Error",
               503: "503 Service Unavailable"}


def request_body(environ):
    """The request's body as bytes (`CONTENT_LENGTH` bytes; waitress has read and bounded it)."""
    return environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))


def json_body(environ):
    """The request's body parsed as JSON (ValueError if it is not JSON)."""
    return json.loads(request_body(environ))


def error_body(message):
    """`{"error": message}` as UTF-8 JSON, TF Serving's error body."""
    return json.dumps({"error": message}).encode("utf-8")
