"""rnnsearch_tf/inference/output_formats.py: the text, n-best and alignment formats, exact and parsed back."""

import json

import numpy as np
import pytest

from rnnsearch_tf.inference import output_formats

RESULT = dict(
    translation="le chat",
    score=-2.0,
    source_tokens=["the", "cat"],
    tokens=["le", "chat"],
    alignment=np.array([[0.75, 0.125, 0.125], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0]], dtype=np.float32),
    truncated=False,
    unks_replaced=0,
    nbest=[("le chat", -1.25), ("", -3.0)],
)


def test_text_format_is_the_translation():
    assert output_formats.format_translation(0, RESULT, "text") == "le chat\n"


def test_nbest_format_is_exact_and_parses():
    text = output_formats.format_translation(7, RESULT, "nbest")
    assert text == "7 ||| le chat ||| beam_score= -1.250000 ||| -1.250000\n7 |||  ||| beam_score= -3.000000 ||| -3.000000\n"
    assert [output_formats.parse_nbest_line(line) for line in text.splitlines()] == [
        (7, "le chat", {"beam_score": -1.25}, -1.25),
        (7, "", {"beam_score": -3.0}, -3.0),
    ]


def test_alignment_format_is_exact_and_parses():
    text = output_formats.format_translation(3, RESULT, "alignment")
    assert text == (
        '{"index": 3, "translation": "le chat", "score": -2.0, "source_tokens": ["the", "cat"], '
        '"target_tokens": ["le", "chat"], "alignment": [[0.75, 0.125, 0.125], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0]], '
        '"hard_alignment": "0-0 1-1", "truncated": false, "unks_replaced": 0}\n'
    )
    assert json.loads(text)["alignment"][1] == [0.25, 0.5, 0.25]


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="output_format must be one of"):
        output_formats.format_translation(0, RESULT, "xml")
    with pytest.raises(ValueError, match="not a Moses n-best line"):
        output_formats.parse_nbest_line("7 ||| le chat")
