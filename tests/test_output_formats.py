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


CONFIDENT = dict(RESULT, token_probabilities=[0.5, 0.25, 0.125], mean_log_prob=-1.3862944)


def test_json_format_gives_each_tokens_probability_and_no_alignment():
    text = output_formats.format_translation(4, CONFIDENT, "json")
    assert text == (
        '{"index": 4, "translation": "le chat", "score": -2.0, "mean_log_prob": -1.3862944, '
        '"tokens": ["le", "chat", "</s>"], "token_probabilities": [0.5, 0.25, 0.125], "truncated": false, '
        '"unks_replaced": 0}\n'
    )
    assert json.loads(text)["token_probabilities"][2] == 0.125


def test_json_format_of_subwords_n_best_and_split_lines():
    hypotheses = [dict(CONFIDENT, translation="le chat", score=-1.25),
                  dict(RESULT, translation="", score=-3.0, tokens=[], token_probabilities=[0.05], mean_log_prob=-3.0)]
    subwords = dict(CONFIDENT, words=["lechat"], word_probabilities=[0.125, 0.125], hypotheses=hypotheses)
    record = json.loads(output_formats.format_translation(0, subwords, "json"))
    assert record["words"] == ["lechat", "</s>"] and record["word_probabilities"] == [0.125, 0.125]
    assert [item["tokens"] for item in record["nbest"]] == [["le", "chat", "</s>"], ["</s>"]]
    assert record["nbest"][1] == dict(translation="", score=-3.0, mean_log_prob=-3.0, tokens=["</s>"],
                                      token_probabilities=[0.05])
    line = dict(RESULT, sentences=[CONFIDENT, CONFIDENT])
    record = json.loads(output_formats.format_translation(1, line, "json"))
    assert [sentence["index"] for sentence in record["sentences"]] == [0, 1]
    assert record["sentences"][1]["token_probabilities"] == [0.5, 0.25, 0.125]


def test_alignment_format_adds_the_confidence_where_given():
    record = json.loads(output_formats.format_translation(3, CONFIDENT, "alignment"))
    assert record["token_probabilities"] == [0.5, 0.25, 0.125] and record["mean_log_prob"] == -1.3862944
    assert len(record["token_probabilities"]) == len(record["alignment"])  # </s> included in both
    assert record["hard_alignment"] == "0-0 1-1"


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="output_format must be one of"):
        output_formats.format_translation(0, RESULT, "xml")
    with pytest.raises(ValueError, match="not a Moses n-best line"):
        output_formats.parse_nbest_line("7 ||| le chat")
