"""bench/confidence_measures.py: the AUC (Mann-Whitney, ties one half) against counting every pair, and the labels."""

import numpy as np
import pytest

from bench.confidence_measures import auc, labelled_tokens
from data_pipeline.text_codec import TextCodec


def test_auc_is_the_share_of_pairs_ranked_right_ties_counting_half():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 6, size=200) / 5.0  # many ties
    labels = rng.random(200) < scores * 0.8
    pairs = [(1.0 if p > n else 0.5 if p == n else 0.0) for p in scores[labels] for n in scores[~labels]]
    assert auc(scores, labels) == pytest.approx(np.mean(pairs), abs=1e-12)
    assert auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auc([0.5, 0.5], [True, False]) == 0.5
    with pytest.raises(ValueError, match="both labels"):
        auc([0.5, 0.4], [True, True])


def test_a_token_is_labelled_by_whether_the_reference_holds_it():
    results = [dict(tokens=["Le", "chat", "noir"], token_probabilities=[0.9, 0.6, 0.2, 0.95]),
               dict(tokens=[], token_probabilities=[])]
    probabilities, labels = labelled_tokens(results, ["Un chat Le .", ""], TextCodec("fr"))
    np.testing.assert_array_equal(probabilities, [0.9, 0.6, 0.2])  # </s> left out
    np.testing.assert_array_equal(labels, [True, True, False])
