"""Tests of `Sampler`: reproducible draws, the right distribution, ranking and forbidden ids."""

import numpy as np
import pytest
import tensorflow as tf
from helpers.search_test_models import (
    GREEDY_IS_NOT_BEST,
    BigramModel,
    HashModel,
    check_token_log_probs,
    hypotheses,
    numpy_result,
)

from data_pipeline import constants
from rnnsearch_tf.search.greedy_search import GreedySearch
from rnnsearch_tf.search.sampler import Sampler

EOS = constants.EOS_ID


def test_samples_are_ranked_scored_and_reproducible():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=3)
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=8, seed=5)
    result = numpy_result(sampler(initial_state, tf.constant([6, 10, 3])))
    assert result["ids"].shape[:2] == (3, 8)
    assert result["alignments"].shape[:2] == (3, 8)
    for sentence in range(3):
        assert np.all(np.diff(result["log_probs"][sentence]) <= 0)  # best first
        np.testing.assert_array_equal(result["scores"][sentence], result["log_probs"][sentence])
        for rank, ids in enumerate(hypotheses(result, sentence)):
            assert ids[-1] == EOS and EOS not in ids[:-1]
            log_prob = model.sequence_log_prob(sentence, ids)
            np.testing.assert_allclose(result["log_probs"][sentence, rank], log_prob, atol=1e-4)
            outputs = result["alignments"][sentence, rank]
            np.testing.assert_allclose(outputs[: len(ids)], model.alignments(sentence, ids))
    assert len({tuple(ids) for ids in hypotheses(result, 1)}) > 1  # samples differ
    check_token_log_probs(model, result)
    tempered = Sampler(model.symbols_to_logits_fn, num_samples=8, temperature=0.5, seed=5)
    check_token_log_probs(model, numpy_result(tempered(initial_state, tf.constant([6, 10, 3]))))  # the model's own

    again = numpy_result(sampler(initial_state, tf.constant([6, 10, 3])))
    np.testing.assert_array_equal(again["ids"], result["ids"])
    other_seed = Sampler(model.symbols_to_logits_fn, num_samples=8, seed=6)
    other_result = numpy_result(other_seed(initial_state, tf.constant([6, 10, 3])))
    assert not np.array_equal(other_result["ids"], result["ids"])


def test_draws_follow_the_model_distribution():
    model = BigramModel(GREEDY_IS_NOT_BEST)
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=4000, seed=1)
    result = numpy_result(sampler({}, tf.constant([2])))
    first_words = result["ids"][0, :, 0]
    frequencies = np.bincount(first_words, minlength=6) / first_words.size
    np.testing.assert_allclose(frequencies, np.exp(model.log_probs[constants.BOS_ID]), atol=0.025)
    # At the maximum length (2) the second token is always EOS unless the first one was.
    np.testing.assert_array_equal(result["lengths"][0], np.where(first_words == EOS, 1, 2))


def test_low_temperature_gives_the_greedy_translation():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=2)
    greedy = numpy_result(GreedySearch(model.symbols_to_logits_fn)(initial_state, 10))
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=5, temperature=1e-3)
    sampled = numpy_result(sampler(initial_state, 10))
    for rank in range(5):
        np.testing.assert_array_equal(sampled["ids"][:, rank], greedy["ids"][:, 0])
        np.testing.assert_allclose(sampled["log_probs"][:, rank], greedy["log_probs"][:, 0], rtol=1e-6)


def test_forbidden_ids_are_never_drawn():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    sampler = Sampler(
        model.symbols_to_logits_fn, num_samples=30, temperature=3.0, forbidden_ids=(constants.UNK_ID, 6)
    )
    result = numpy_result(sampler(model.initial_state(batch_size=2), 8))
    assert not np.isin(result["ids"], [constants.UNK_ID, 6]).any()


def test_length_normalization_ranks_by_score():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=10, length_normalization="length")
    result = numpy_result(sampler(model.initial_state(batch_size=2), 10))
    np.testing.assert_allclose(result["scores"], result["log_probs"] / result["lengths"], rtol=1e-6)
    assert np.all(np.diff(result["scores"], axis=1) <= 0)


def test_inside_tf_function_with_unknown_batch_size():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=4, seed=2)
    initial_state = model.initial_state(batch_size=3)
    spec = {
        "prefix_hash": tf.TensorSpec([None], tf.int32),
        "source": {"bias": tf.TensorSpec([None, 9], tf.float32)},
    }
    concrete = tf.function(sampler.__call__).get_concrete_function(
        spec, tf.TensorSpec([None], tf.int32)
    )
    assert concrete.structured_outputs["ids"].shape.as_list() == [None, 4, None]
    graph_result = numpy_result(concrete(initial_state, tf.constant([4, 8, 2])))
    eager_result = numpy_result(sampler(initial_state, tf.constant([4, 8, 2])))
    for name in eager_result:
        np.testing.assert_allclose(graph_result[name], eager_result[name], rtol=1e-6)


def test_every_sample_starts_with_the_prefix():
    model = HashModel(vocab_size=9, eos_logit_shift=-1.0)
    initial_state = model.initial_state(batch_size=3)
    sampler = Sampler(model.symbols_to_logits_fn, num_samples=6, seed=3, forbidden_ids=(constants.UNK_ID,))
    prefixes = [[constants.UNK_ID, 6], [], [5]]
    prefix_ids = tf.constant([[constants.UNK_ID, 6], [0, 0], [5, 0]])
    result = numpy_result(sampler.search(initial_state, 10, prefix_ids=prefix_ids))
    for sentence, prefix in enumerate(prefixes):
        for rank, ids in enumerate(hypotheses(result, sentence)):
            assert ids[: len(prefix)] == prefix and ids[-1] == EOS
            np.testing.assert_allclose(result["log_probs"][sentence, rank], model.sequence_log_prob(sentence, ids),
                                       atol=1e-4)
    free = numpy_result(sampler(initial_state, 10))
    np.testing.assert_array_equal(result["ids"][1], free["ids"][1])  # an empty prefix draws the same samples
    assert len({tuple(ids) for ids in hypotheses(result, 2)}) > 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_samples=0), "num_samples"),
        (dict(temperature=0.0), "temperature"),
        (dict(forbidden_ids=(EOS,)), "cannot be forbidden"),
    ],
)
def test_misuse(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Sampler(BigramModel(GREEDY_IS_NOT_BEST).symbols_to_logits_fn, **kwargs)
