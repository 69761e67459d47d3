"""serving/http_messages.py: the request body read by its length, JSON bodies, TF Serving's error body."""

import io
import json

import pytest

from serving.http_messages import STATUS_TEXT, error_body, json_body, request_body


def _environ(body, length=None):
    return {"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body) if length is None else length)}


def test_the_body_is_read_by_its_length_and_parsed_as_json():
    assert request_body(_environ(b'{"a": 1}tail', length=8)) == b'{"a": 1}'
    assert request_body({"wsgi.input": io.BytesIO(b"ignored")}) == b""
    assert json_body(_environ(b'{"instances": ["x"]}')) == {"instances": ["x"]}
    with pytest.raises(ValueError):
        json_body(_environ(b"not json"))


def test_errors_are_tf_servings_json_and_every_status_has_its_line():
    assert json.loads(error_body("bad ünïcode")) == {"error": "bad ünïcode"}
    assert all(line.startswith(f"{status} ") for status, line in STATUS_TEXT.items())
