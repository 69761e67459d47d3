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
        (7, "le chat", {"beam_score": [-1.25]}, -1.25, None),
        (7, "", {"beam_score": [-3.0]}, -3.0, None),
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


def test_a_result_searched_over_a_shortlist_says_so():
    """Its score and probabilities are over the shortlist's words: the json and alignment records say so."""
    for output_format in ("json", "alignment"):
        record = json.loads(output_formats.format_translation(0, dict(CONFIDENT, shortlist=True), output_format))
        assert record["shortlist"] is True and list(record)[-1] == "shortlist"
        assert "shortlist" not in json.loads(output_formats.format_translation(0, CONFIDENT, output_format))
    line = json.loads(output_formats.format_translation(1, dict(RESULT, sentences=[dict(CONFIDENT, shortlist=True)]),
                                                        "json"))
    assert line["sentences"][0]["shortlist"] is True


def test_alignment_format_adds_the_confidence_where_given():
    record = json.loads(output_formats.format_translation(3, CONFIDENT, "alignment"))
    assert record["token_probabilities"] == [0.5, 0.25, 0.125] and record["mean_log_prob"] == -1.3862944
    assert len(record["token_probabilities"]) == len(record["alignment"])  # </s> included in both
    assert record["hard_alignment"] == "0-0 1-1"


MOSES_LINE = "0 ||| Un chien court . ||| LM0= -20.5 WordPenalty0= -4 TranslationModel0= -1.5 -2.5 -3.5 -4.5 ||| -10.25"


def test_a_moses_line_keeps_every_value_of_a_feature_and_its_word_alignment():
    """Moses' format is `id ||| hypothesis ||| features ||| total [||| alignment]`, a feature of several values."""
    features = {"LM0": [-20.5], "WordPenalty0": [-4.0], "TranslationModel0": [-1.5, -2.5, -3.5, -4.5]}
    assert output_formats.parse_nbest_line(MOSES_LINE) == (0, "Un chien court .", features, -10.25, None)
    aligned = output_formats.parse_nbest_line(MOSES_LINE + " ||| 0-0 1-1 2-2 3-3\n")
    assert aligned == (0, "Un chien court .", features, -10.25, "0-0 1-1 2-2 3-3")
    assert output_formats.nbest_line(0, "Un chien court .", features, -10.25, "0-0 1-1 2-2 3-3") == (
        "0 ||| Un chien court . ||| LM0= -20.500000 WordPenalty0= -4.000000 TranslationModel0= -1.500000 -2.500000 "
        "-3.500000 -4.500000 ||| -10.250000 ||| 0-0 1-1 2-2 3-3\n")
    piped = output_formats.parse_nbest_line("3 ||| a ||| b ||| x= 1 ||| -2 ||| 0-0")  # " ||| " in a translation
    assert piped == (3, "a ||| b", {"x": [1.0]}, -2.0, "0-0")


@pytest.mark.parametrize("line, problem", [
    ("0 ||| Un chien ||| a= 1 ||| x", "the total 'x' is not a number"),
    ("zero ||| Un chien ||| a= 1 ||| -1", "the index 'zero' is not a whole number"),
    ("0 ||| Un chien ||| a=1 ||| -1", "the feature value 'a=1' has no name before it"),
    ("0 ||| Un chien ||| a= 1 b= y ||| -1", "the value 'y' of feature b= is not a number"),
    ("0 ||| Un chien ||| a= 1 b= ||| -1", "the feature b= has no value"),
])
def test_a_bad_nbest_line_is_named_with_its_file_and_number(line, problem):
    with pytest.raises(ValueError, match=f"^list.nbest:3: {problem}"):
        output_formats.parse_nbest_lines([MOSES_LINE, "", line], "list.nbest")
    entries = output_formats.parse_nbest_lines([MOSES_LINE, "", MOSES_LINE], "list.nbest")
    assert list(entries) == [1, 3] and entries[3][3] == -10.25  # by line number, blank lines left out


def test_misuse_is_refused():
    with pytest.raises(ValueError, match="output_format must be one of"):
        output_formats.format_translation(0, RESULT, "xml")
    with pytest.raises(ValueError, match="not a Moses n-best line"):
        output_formats.parse_nbest_line("7 ||| le chat")
