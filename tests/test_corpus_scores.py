"""corpus_scores: BLEU, chrF, chrF++ and TER as sacreBLEU defines them, with their signatures."""

import pytest

from rnnsearch_tf.evaluation.corpus_scores import METRICS, corpus_scores

REFERENCES = ["the cat sat on the mat", "a dog runs in the park"]


def test_a_perfect_translation_scores_100_and_no_edits():
    scores, signatures = corpus_scores(REFERENCES, REFERENCES)
    assert scores == pytest.approx({"bleu": 100.0, "chrf": 100.0, "chrf_plus_plus": 100.0, "ter": 0.0})
    assert sorted(signatures) == sorted(METRICS)
    assert "nw:0" in signatures["chrf"] and "nw:2" in signatures["chrf_plus_plus"]  # chrF++: word bigrams
    assert "tok:13a" in signatures["bleu"]


def test_ter_counts_a_block_shift_as_one_edit_and_chrf_plus_plus_counts_words_too():
    scores, _ = corpus_scores(["c d a b"], ["a b c d"], ["ter", "chrf", "chrf_plus_plus"])
    assert scores["ter"] == pytest.approx(25.0)  # one shift of "a b", over 4 reference words
    # Single-letter words: chrF sees only the characters' n-grams across the shift; chrF++ adds the four
    # matching words and one of three matching word bigrams.
    assert scores["chrf_plus_plus"] > scores["chrf"]


def test_only_the_metrics_asked_for():
    scores, signatures = corpus_scores(["the cat"], ["the cat"], ["bleu"])
    assert list(scores) == list(signatures) == ["bleu"]
